import Foundation

extension Engine {
    /// Evaluates every region request the fix may concern: the fences whose boxes hold it, the
    /// ones the device has state for, and (for `initial: "state"`) every one it has not reported.
    func apply(_ fix: Fix, device: Int32) {
        let accuracy = fix.accuracy ?? 0
        let sequence = applySequence
        fixFiltered = false
        visitStamp &+= 1
        if visitStamp == 0 {
            for slot in visited.indices { visited[slot] = 0 }
            visitStamp = 1
        }
        candidates.removeAll(keepingCapacity: true)
        // A fix some filtered request does not take goes the careful way: every candidate is
        // asked its verdict, and no settled or safe disc is used or measured (a request skipped
        // here would be missing from the measurement).
        let careful = devices.filteredBuckets > 0 && judgeFilters(fix, device: device, accuracy: accuracy)
        if careful {
            devices.unsettle(device: device)
            devices.fixStates[Int(device)].disc.radius = 0
        }
        let crosses =
            crossIndex.count > 0 ? pendingCrosses(fix, device: device, accuracy: accuracy, careful: careful) : []
        // Within the device's settled disc every record would step as a settled no-op: none is
        // read. Otherwise tracked pairs whose certificates settle the fix step first, reading
        // nothing of their requests (a likely cache miss each); they lead `candidates` so the loop
        // below skips them.
        let isSettled =
            !careful
            && devices.fixStates[Int(device)].isSettled(fix.coordinate, accuracy: accuracy, epoch: requestEpoch)
        if isSettled {
            devices.fixStates[Int(device)].skippedFix = Position(coordinate: fix.coordinate, accuracy: fix.accuracy)
        } else {
            devices.takeSkippedFix(device: device)
        }
        let settled = isSettled || careful ? 0 : stepSettledRecords(fix, device: device)
        // `safe`: while measuring, the radius of the device's next safe disc (see `SafeDisc`).
        var measuring = false
        var safe = Double.infinity
        if index.count > 0 {
            let point = fix.coordinate
            let disc = devices.fixStates[Int(device)].disc
            if accuracyWideningRequests == 0 && disc.radius > 0 && disc.epoch == requestEpoch && disc.holds(point) {
                // Still inside the safe disc: only the requests the device has records for can change.
            } else if accuracyWideningRequests > 0 && accuracy > 0 {
                let box = GeoBounds(
                    south: point.latitude, north: point.latitude, west: point.longitude, east: point.longitude)
                index.query(bounds: box.expanded(byMetres: accuracy), into: &candidates)
            } else if accuracyWideningRequests == 0 && usesSafeDiscs && !careful {
                measuring = true
                safe = 1000
                index.query(latitude: point.latitude, longitude: point.longitude, into: &candidates, clearance: &safe)
            } else {
                index.query(latitude: point.latitude, longitude: point.longitude, into: &candidates)
            }
        }
        if candidates.count > settled { prefetchFences(settled..<candidates.count, settled: settled) }
        // By index in place: a for-in copied each record (a couple of hundred bytes) to read its slot.
        // Settled as a whole, none needs evaluating (one the index finds goes by its record).
        if !isSettled {
            let first = candidates.count
            if careful {
                devices.records[Int(device)].withUnsafeBufferPointer { records in
                    for index in records.indices { candidates.append(records[index].slot) }
                }
            } else {
                // The settled ones would only repeat the first `settled` candidates; collected in
                // the step's pass, the records are not read again (nor their array retained).
                candidates.append(contentsOf: unsettledSlots)
            }
            // Records the certificates did not settle are measured below (and only those are here).
            if candidates.count > first { prefetchFences(first..<candidates.count, settled: 0) }
        }
        // A handful of candidates (the usual) are deduplicated among themselves: a stamp per slot
        // is a likely cache miss each. Many, or `initial: "state"` requests to sweep, use stamps.
        let stamping = candidates.count > 16 || !stateSlots.isEmpty
        if stamping {
            for slot in candidates[..<settled] { visited[Int(slot)] = visitStamp }
        }
        withUnsafeMutablePointer(to: &safe) { safe in
            for position in settled..<candidates.count {
                let slot = candidates[position]
                if stamping {
                    guard visited[Int(slot)] != visitStamp else { continue }
                    visited[Int(slot)] = visitStamp
                } else if candidates(before: position, contain: slot) {
                    continue
                }
                if careful && filterVerdict(slot: slot, device: device, fix: fix) != .accept
                    && flatSlots[Int(slot)].isAlive
                {
                    continue
                }
                evaluate(slot: slot, device: device, fix: fix, accuracy: accuracy, safe: measuring ? safe : nil)
            }
        }
        if stamping {
            for slot in stateSlots where visited[Int(slot)] != visitStamp {
                if careful && filterVerdict(slot: slot, device: device, fix: fix) != .accept { continue }
                evaluate(slot: slot, device: device, fix: fix, accuracy: accuracy, safe: nil)
            }
        }
        if measuring {
            devices.fixStates[Int(device)].disc = DeviceTable.SafeDisc(
                center: fix.coordinate, radius: safe > 1 ? safe - 0.05 : 0, epoch: requestEpoch)
        }
        for cross in crosses { confirmCross(slot: cross.slot, distance: cross.distance, device: device, fix: fix) }
        if devices.filteredBuckets > 0 { settleFilters(fix, device: device, sequence: sequence) }
        devices.accept(
            device: device, coordinate: fix.coordinate, time: fix.time, accuracy: accuracy, sequence: sequence,
            skippingFiltered: devices.filteredBuckets > 0)
        if !proximity.isEmpty { applyProximity(fix, device: device) }
    }

    /// Asks for what evaluating the candidates in `range` reads first, all at once rather than a
    /// miss after each other: their hot slots, then the header and first bands of each one's
    /// polygon block. The first `settled` candidates (records their certificates settled) are
    /// skipped, as the candidate loop skips them.
    ///
    /// The misses overlap instead of following one another, which is what the latency tail is
    /// made of; settled records' fences are not fetched, since the common fix reads none of them.
    @inline(__always)
    func prefetchFences(_ range: Range<Int>, settled: Int) {
        let slots = flatSlotBuffer
        // Past a few settled records, telling them apart costs more than the misses it saves (and
        // grows with candidates × records: thousands of overlapping fences).
        let skipsSettled = settled <= 16
        func wanted(_ position: Int) -> Bool {
            !skipsSettled || !candidates(before: settled, contain: candidates[position])
        }
        for position in range where wanted(position) {
            prefetch(slots.baseAddress! + Int(candidates[position]), byteCount: MemoryLayout<HotSlot>.size)
        }
        for position in range where wanted(position) {
            if let block = slots[Int(candidates[position])].polygonBlock {
                prefetch(block.base, byteCount: 256)
            }
        }
    }

    /// Whether `slot` is among the first `count` candidates. By index: a slice of the array
    /// retained and released its storage for every candidate asked about.
    @inline(__always)
    func candidates(before count: Int, contain slot: Int32) -> Bool {
        var index = 0
        while index < count {
            if candidates[index] == slot { return true }
            index += 1
        }
        return false
    }

    /// Steps the device's records that their certificates settle (see
    /// ``DeviceTable/RegionRecord/stepSettled(_:at:accuracy:epoch:)``), appending their slots to
    /// `candidates`, and the others' to `unsettledSlots`, in record order; returns how many it
    /// settled. Sets the device's settled disc when every record settles with nothing pending,
    /// and voids it otherwise.
    func stepSettledRecords(_ fix: Fix, device: Int32) -> Int {
        unsettledSlots.removeAll(keepingCapacity: true)
        guard !devices.records[Int(device)].isEmpty else { return 0 }
        let position = Position(coordinate: fix.coordinate, accuracy: fix.accuracy)
        let accuracy = fix.accuracy ?? 0
        let epoch = requestEpoch
        var quiet = true
        var radius = 1000.0
        var accuracyLimit = Double.infinity
        let count = devices.records[Int(device)].withUnsafeMutableBufferPointer { records in
            var count = 0
            for index in records.indices {
                guard records[index].stepSettled(position, at: fix.time, accuracy: accuracy, epoch: epoch) else {
                    unsettledSlots.append(records[index].slot)
                    quiet = false
                    continue
                }
                candidates.append(records[index].slot)
                count += 1
                guard quiet else { continue }
                if records[index].machine.pendingStreak != nil || records[index].machine.awaitsDwell {
                    quiet = false
                } else {
                    radius = min(radius, records[index].safe.radiusWithin(around: fix.coordinate))
                    accuracyLimit = min(accuracyLimit, records[index].safeAccuracy)
                }
            }
            return count
        }
        if quiet && radius > 1 {
            devices.fixStates[Int(device)].settled = DeviceTable.SafeDisc(
                center: fix.coordinate, radius: radius, epoch: epoch)
            devices.fixStates[Int(device)].settledAccuracy = accuracyLimit
        } else {
            devices.unsettle(device: device)
        }
        return count
    }

    /// Evaluates one region request for a fix. With `safe`, a request the device has (and gets) no
    /// record for lowers it to the metres the device may move before the request could meet its
    /// enter condition.
    func evaluate(slot: Int32, device: Int32, fix: Fix, accuracy: Double, safe: UnsafeMutablePointer<Double>?) {
        // Read in place: a copy of the slot (over a hundred bytes) per candidate showed in profiles.
        // Nothing below changes `flatSlots`, so the storage stays put.
        assert(
            flatSlotBuffer.baseAddress == flatSlots.withUnsafeBufferPointer { $0.baseAddress },
            "flatSlotBuffer not renewed")
        evaluate(
            slot: slot, hot: flatSlotBuffer.baseAddress! + Int(slot), device: device, fix: fix, accuracy: accuracy,
            safe: safe)
    }

    func evaluate(
        slot: Int32, hot: UnsafePointer<HotSlot>, device: Int32, fix: Fix, accuracy: Double,
        safe: UnsafeMutablePointer<Double>?
    ) {
        let recordIndex = devices.recordIndex(device: device, slot: slot)
        guard hot.pointee.isAlive, hot.pointee.isRegion else {
            if let recordIndex {
                devices.removeRecord(at: recordIndex, device: device)
                devices.unsettle(device: device)
            }
            return
        }
        if hot.pointee.isScoped && !requests[Int(slot)].applies(to: device) { return }
        guard accuracy <= hot.pointee.maxAccuracy else {
            safe?.pointee = 0  // not evaluated: nothing is known about it
            return
        }
        let position = Position(coordinate: fix.coordinate, accuracy: fix.accuracy)
        if let recordIndex {
            devices.unsettle(device: device)
            // The record is stepped where it is stored (a copy in and out of the array, per tracked
            // pair and fix, showed in profiles); only an action or a record falling idle copies it.
            // Nothing in the step touches the device's record array but through `stored`.
            let step: (action: RegionStateMachine.Action, isIdle: Bool)? = devices.records[Int(device)]
                .withUnsafeMutableBufferPointer { records in
                    let stored = records.baseAddress! + recordIndex
                    guard !stored.pointee.isDone else { return nil }
                    let condition: RegionStateMachine.Condition
                    if hot.pointee.mode == .ignore && (hot.pointee.shape == .polygon || hot.pointee.shape == .circle) {
                        condition = certifiedCondition(
                            hot: hot.pointee, point: fix.coordinate, record: &stored.pointee)
                    } else {
                        condition = regionCondition(
                            slot: slot, hot: hot.pointee, point: fix.coordinate, accuracy: accuracy)
                    }
                    let action = stored.pointee.machine.fix(
                        condition, at: fix.time, rules: hot.pointee.rules, token: makeToken())
                    stored.pointee.lastPosition = position
                    stored.pointee.insideAfterLastFix = stored.pointee.machine.isInside
                    return (action, stored.pointee.isIdle)
                }
            guard let step else { return }
            guard step.action != .none || step.isIdle else { return }
            var record = devices.records[Int(device)][recordIndex]
            if step.action != .none { perform(step.action, slot: slot, device: device, record: &record) }
            store(record, at: recordIndex, device: device)
            if record.isIdle, let safe {
                // No record from now on: later fixes inside the disc will not look at it.
                safe.pointee = min(safe.pointee, enterMargin(slot: slot, hot: hot.pointee, point: fix.coordinate))
            }
            return
        }
        // While measuring a disc, a polygon's condition and margin come from one measurement.
        var margin: Double?
        let condition: RegionStateMachine.Condition
        if safe != nil && hot.pointee.shape == .polygon && hot.pointee.mode != .overlap {
            let measured = polygonConditionAndMargin(hot: hot.pointee, point: fix.coordinate, accuracy: accuracy)
            condition = measured.condition
            margin = measured.margin
        } else {
            condition = regionCondition(slot: slot, hot: hot.pointee, point: fix.coordinate, accuracy: accuracy)
        }
        let known = devices.hasAcceptedFix(
            device: device, bucket: hot.pointee.bucket, after: hot.pointee.addedSequence, slot: slot)
        var machine: RegionStateMachine
        let action: RegionStateMachine.Action
        if known {
            // Known to be outside: only a fix meeting the enter condition starts anything.
            guard condition == .enter else {
                if let safe {
                    safe.pointee = min(
                        safe.pointee,
                        margin ?? enterMargin(slot: slot, hot: hot.pointee, point: fix.coordinate))
                }
                return
            }
            machine = RegionStateMachine()
            action = machine.fix(condition, at: fix.time, rules: hot.pointee.rules, token: makeToken())
        } else {
            (machine, action) = RegionStateMachine.first(
                condition, at: fix.time, policy: hot.pointee.initial, rules: hot.pointee.rules, token: makeToken())
        }
        var record = DeviceTable.RegionRecord(
            slot: slot, machine: machine, insideAfterLastFix: machine.isInside, lastPosition: position)
        // A first fix inside begins a stay, even a silent one (a confirmed enter begins its own).
        if !known && machine.isInside {
            startStay(&record, request: requests[Int(slot)].id, device: device, since: fix.time)
        }
        if action != .none { perform(action, slot: slot, device: device, record: &record) }
        if !record.isIdle {
            devices.appendRecord(record, device: device)
            devices.unsettle(device: device)
        } else if let safe {
            safe.pointee = min(safe.pointee, margin ?? enterMargin(slot: slot, hot: hot.pointee, point: fix.coordinate))
        }
    }
}
