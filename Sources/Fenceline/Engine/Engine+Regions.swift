import Foundation

extension Engine {
    /// Evaluates every region request the fix may concern: the fences whose boxes hold it, the
    /// ones the device has state for, and (for `initial: "state"`) every one it has not reported.
    func apply(_ fix: Fix, device: Int32) {
        let accuracy = fix.accuracy ?? 0
        let sequence = applySequence
        visitStamp &+= 1
        if visitStamp == 0 {
            for slot in visited.indices { visited[slot] = 0 }
            visitStamp = 1
        }
        candidates.removeAll(keepingCapacity: true)
        let crosses = crossIndex.count > 0 ? pendingCrosses(fix, device: device, accuracy: accuracy) : []
        // Within the device's settled disc every record would step as a settled no-op: none is
        // read. Otherwise tracked pairs whose certificates settle the fix step first, reading
        // nothing of their requests (a likely cache miss each); they lead `candidates` so the loop
        // below skips them.
        let isSettled = devices.fixStates[Int(device)].isSettled(
            fix.coordinate, accuracy: accuracy, epoch: requestEpoch)
        let settled = isSettled ? 0 : stepSettledRecords(fix, device: device)
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
            } else if accuracyWideningRequests == 0 && usesSafeDiscs {
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
            devices.records[Int(device)].withUnsafeBufferPointer { records in
                for index in records.indices { candidates.append(records[index].slot) }
            }
            // Records the certificates did not settle are measured below.
            if candidates.count - first > settled { prefetchFences(first..<candidates.count, settled: settled) }
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
                } else if candidates[..<position].contains(slot) {
                    continue
                }
                evaluate(slot: slot, device: device, fix: fix, accuracy: accuracy, safe: measuring ? safe : nil)
            }
        }
        if stamping {
            for slot in stateSlots where visited[Int(slot)] != visitStamp {
                evaluate(slot: slot, device: device, fix: fix, accuracy: accuracy, safe: nil)
            }
        }
        if measuring {
            devices.fixStates[Int(device)].disc = DeviceTable.SafeDisc(
                center: fix.coordinate, radius: safe > 1 ? safe - 0.05 : 0, epoch: requestEpoch)
        }
        for cross in crosses { confirmCross(slot: cross.slot, distance: cross.distance, device: device, fix: fix) }
        devices.accept(device: device, coordinate: fix.coordinate, accuracy: accuracy, sequence: sequence)
    }

    /// Asks for what evaluating the candidates in `range` reads first, all at once rather than a
    /// miss after each other: their hot slots, then the header and first bands of each one's
    /// polygon block. The first `settled` candidates (records their certificates settled) are
    /// skipped, as the candidate loop skips them.
    ///
    /// The misses overlap instead of following one another, which is what the latency tail is
    /// made of; settled records' fences are not fetched, since the common fix reads none of them.
    @inline(__always)
    private func prefetchFences(_ range: Range<Int>, settled: Int) {
        let slots = flatSlotBuffer
        for position in range where !candidates[..<settled].contains(candidates[position]) {
            prefetch(slots.baseAddress! + Int(candidates[position]), byteCount: MemoryLayout<HotSlot>.size)
        }
        for position in range where !candidates[..<settled].contains(candidates[position]) {
            if let block = slots[Int(candidates[position])].polygonBlock {
                prefetch(block.base, byteCount: 256)
            }
        }
    }

    /// Steps the device's records that their certificates settle (see
    /// ``DeviceTable/RegionRecord/stepSettled(_:at:accuracy:epoch:)``), appending their slots to
    /// `candidates`; returns how many. Sets the device's settled disc when every record settles
    /// with nothing pending, and voids it otherwise.
    private func stepSettledRecords(_ fix: Fix, device: Int32) -> Int {
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
    private func evaluate(slot: Int32, device: Int32, fix: Fix, accuracy: Double, safe: UnsafeMutablePointer<Double>?) {
        // Read in place: a copy of the slot (over a hundred bytes) per candidate showed in profiles.
        // Nothing below changes `flatSlots`, so the storage stays put.
        assert(flatSlotBuffer.baseAddress == flatSlots.withUnsafeBufferPointer { $0.baseAddress }, "flatSlotBuffer not renewed")
        evaluate(
            slot: slot, hot: flatSlotBuffer.baseAddress! + Int(slot), device: device, fix: fix, accuracy: accuracy,
            safe: safe)
    }

    private func evaluate(
        slot: Int32, hot: UnsafePointer<HotSlot>, device: Int32, fix: Fix, accuracy: Double,
        safe: UnsafeMutablePointer<Double>?
    ) {
        let recordIndex = devices.recordIndex(device: device, slot: slot)
        guard hot.pointee.isAlive, hot.pointee.isRegion else {
            if let recordIndex {
                devices.records[Int(device)].remove(at: recordIndex)
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
        let known = devices.hasAcceptedFix(device: device, bucket: hot.pointee.bucket, after: hot.pointee.addedSequence)
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
        if action != .none { perform(action, slot: slot, device: device, record: &record) }
        if !record.isIdle {
            devices.records[Int(device)].append(record)
            devices.unsettle(device: device)
        } else if let safe {
            safe.pointee = min(safe.pointee, margin ?? enterMargin(slot: slot, hot: hot.pointee, point: fix.coordinate))
        }
    }

    /// The condition of a circle or polygon fence (`ignore` mode) for a tracked pair, reusing the
    /// record's certificate when the fix lies inside it and renewing it otherwise.
    ///
    /// The state machine only asks whether a fix meets the condition towards the other side (exit
    /// while inside, enter while outside), so the certificate guards that one threshold: a fix
    /// deep inside may wander into the band and back without a new measurement.
    private func certifiedCondition(
        hot: borrowing HotSlot, point: Coordinate, record: inout DeviceTable.RegionRecord
    ) -> RegionStateMachine.Condition {
        if record.certificateHolds(point, epoch: requestEpoch) { return record.safeCondition }
        let isInside = record.machine.isInside
        let (enter, exit) = hot.limits(accuracy: 0)!  // `ignore` mode: no accuracy term
        // How far the fix is from the threshold the machine watches.
        let threshold = isInside ? exit : enter
        let condition: RegionStateMachine.Condition
        var margin: Double
        if hot.shape == .circle {
            // One measurement serves the condition and the margin.
            if let approximate = hot.circle.approximateDistance(to: point) {
                condition = Self.circleCondition(
                    hot.circle, approximate: approximate, point: point, enter: enter, exit: exit)
                // Within 3 cm of the haversine distance the condition is decided by.
                margin = abs(approximate - hot.circle.radius - threshold) - 0.1
            } else {
                let s = hot.circle.signedDistance(to: point)
                condition = Self.condition(snappedToBoundary(s), enter: enter, exit: exit)
                margin = abs(s - threshold) - 0.01
            }
        } else {
            let reach = max(abs(enter), abs(exit)) + 50
            let (inside, distance) = polygonContainment(hot, of: point, measuringWithin: reach)
            let s = signedDistance(inside: inside, distance: distance)
            condition = Self.condition(s, enter: enter, exit: exit)
            // Beyond reach, `s` is only known to be below -reach (inside) or above +reach.
            margin = s.isFinite ? abs(s - threshold) : max(0, inside ? threshold + reach : reach - threshold)
        }
        // At most a kilometre, and none near the poles: the disc's local projection is padded for
        // that (as for the devices' safe discs), not for the kilometres a large circle or a large
        // cushion gives.
        margin = abs(point.latitude) > 80 ? 0 : min(margin, 1000)
        record.safe = DeviceTable.SafeDisc(
            center: point, radius: margin > 1 && usesCertificates ? margin - 1 : 0, epoch: requestEpoch)
        record.safeCondition = condition
        record.safeInside = isInside
        record.safeAccuracy = hot.maxAccuracy
        record.safeExitDelay = hot.rules.exitDelay
        record.safeMinFixes = hot.rules.minFixes
        return condition
    }

    /// ``PolygonShape/containment(of:measuringWithin:)`` of the polygon in a slot, read through
    /// its block when it has one.
    @inline(__always)
    func polygonContainment(_ hot: borrowing HotSlot, of point: Coordinate, measuringWithin limit: Double) -> (
        inside: Bool, distance: Double
    ) {
        if let block = hot.polygonBlock { return block.containment(of: point, measuringWithin: limit) }
        return polygons[hot.polygon].containment(of: point, measuringWithin: limit)
    }

    /// The condition of a signed distance `s` under the thresholds `enter` (met when `s ≤ enter`)
    /// and `exit` (met when `s > exit`), each with the boundary tolerance.
    @inline(__always)
    static func condition(_ s: Double, enter: Double, exit: Double) -> RegionStateMachine.Condition {
        if s <= enter + boundaryTolerance { return .enter }
        return s > exit + boundaryTolerance ? .exit : .band
    }

    /// The SPEC §5 condition of a fix for the region in `slot`, from its flat values.
    ///
    /// The three distance modes are thresholds on `s` (`HotSlot.limits`), and the exact `s` is
    /// computed only when it matters: a circle is first measured by a local projection (within
    /// 3 cm) and by haversine only within 10 cm of a threshold; a polygon measures only the edges
    /// within reach of a threshold.
    @inline(__always)
    func regionCondition(slot: Int32, hot: borrowing HotSlot, point: Coordinate, accuracy: Double)
        -> RegionStateMachine.Condition
    {
        guard let limits = hot.limits(accuracy: accuracy) else {
            let region = requests[Int(slot)].region!
            let s = region.fence.signedDistance(to: point)
            let share = region.fence.overlapShare(point: point, accuracy: accuracy, signedDistance: s)
            if share >= region.enterOverlap { return .enter }
            return share <= region.exitOverlap ? .exit : .band
        }
        func classify(_ s: Double) -> RegionStateMachine.Condition {
            Self.condition(s, enter: limits.enter, exit: limits.exit)
        }
        switch hot.shape {
        case .circle:
            return Self.circleCondition(
                hot.circle, approximate: hot.circle.approximateDistance(to: point), point: point, enter: limits.enter,
                exit: limits.exit)
        case .polygon:
            let (inside, distance) = polygonContainment(
                hot,
                of: point, measuringWithin: max(abs(limits.enter), abs(limits.exit)) + 1)
            return classify(signedDistance(inside: inside, distance: distance))
        case .other, .none:
            return classify(requests[Int(slot)].region!.fence.signedDistance(to: point))
        }
    }

    /// A circle's condition under the thresholds `enter` and `exit` on `s`, from its `approximate`
    /// centre distance (``CircleShape/approximateDistance(to:)``, within 3 cm) unless that lies
    /// within 10 cm of a threshold, when the exact distance decides.
    @inline(__always)
    static func circleCondition(
        _ circle: CircleShape, approximate: Double?, point: Coordinate, enter: Double, exit: Double
    ) -> RegionStateMachine.Condition {
        if let approximate {
            let s = approximate - circle.radius
            if s <= enter - 0.1 { return .enter }
            if s > exit + 0.1 { return .exit }
            if s > enter + 0.1 && s <= exit - 0.1 { return .band }
        }
        return condition(snappedToBoundary(circle.signedDistance(to: point)), enter: enter, exit: exit)
    }

    /// The condition of a polygon (not in `overlap` mode) and its `enterMargin`, from one
    /// measurement within the reach the condition needs and 60 m beyond.
    ///
    /// The margin is known only within that reach, and it bounds the device's safe disc: a reach
    /// just past the thresholds would let every polygon whose box holds a fix it is outside of
    /// shrink the disc to a few tens of metres, and the next fixes would query the index again.
    private func polygonConditionAndMargin(hot: borrowing HotSlot, point: Coordinate, accuracy: Double) -> (
        condition: RegionStateMachine.Condition, margin: Double
    ) {
        let limits = hot.limits(accuracy: accuracy)!
        let reach = max(abs(limits.enter), abs(limits.exit)) + 60
        let (inside, distance) = polygonContainment(hot, of: point, measuringWithin: reach)
        let s = signedDistance(inside: inside, distance: distance)
        let condition = Self.condition(s, enter: limits.enter, exit: limits.exit)
        let margin: Double
        switch hot.mode {
        case .ignore, .conservative:
            // Beyond reach the distance is only known to exceed it.
            let bound = inside ? s : min(s, reach)
            margin = max(0, bound + hot.enterCushion - 0.01)
        case .generous, .overlap:
            margin = 0
        }
        return (condition, margin)
    }

    /// A lower bound of the metres `point` may move before the region in `slot` could meet its
    /// enter condition at any accuracy: `s` minus the loosest enter limit, which for the `ignore`
    /// and `conservative` modes is `-enterCushion` (accuracy only tightens the latter); 0 for the
    /// modes whose limit grows with accuracy (safe discs are not used with those).
    func enterMargin(slot: Int32, hot: borrowing HotSlot, point: Coordinate) -> Double {
        switch hot.mode {
        case .ignore, .conservative: break
        case .generous, .overlap: return 0
        }
        let enter = -hot.enterCushion
        let s: Double
        switch hot.shape {
        case .circle:
            if let approximate = hot.circle.approximateDistance(to: point) {
                s = approximate - hot.circle.radius - 0.05
            } else {
                s = hot.circle.signedDistance(to: point)
            }
        case .polygon:
            // Far from the polygon its box gives the bound; near it, the edges within reach.
            let box = polygons[hot.polygon].boxDistance(to: point)
            if box > 0 {
                s = box
            } else {
                let reach = 60 + abs(enter)
                let (inside, distance) = polygonContainment(hot, of: point, measuringWithin: reach)
                s = inside ? -distance : min(distance, reach)
            }
        case .other:
            s = requests[Int(slot)].region!.fence.signedDistance(to: point)
        case .none:
            return .infinity
        }
        return max(0, s - enter - 0.01)
    }

    /// Fires a timer: a region streak's delay or a visit's dwell, or a beacon timer.
    func fire(_ timer: EngineTimer) {
        switch timer.kind {
        case .confirmation, .dwell:
            if let tracer = isTraced(timer) {
                fireTraced(timer, tracer: tracer) { fireRegion(timer) }
            } else {
                fireRegion(timer)
            }
        case .beaconEnter, .beaconTimeout, .beaconExit: fireBeacon(timer)
        case .timing: fireTiming(timer)
        }
    }

    private func fireRegion(_ timer: EngineTimer) {
        // The hot slot holds what a timer needs; the request entry is read only for an event.
        guard states[Int(timer.slot)].isAlive, flatSlotBuffer[Int(timer.slot)].isRegion,
            let recordIndex = devices.recordIndex(device: timer.device, slot: timer.slot)
        else { return }
        let rules = flatSlotBuffer[Int(timer.slot)].rules
        var record = devices.records[Int(timer.device)][recordIndex]
        guard !record.isDone else { return }
        let action: RegionStateMachine.Action
        switch timer.kind {
        case .confirmation:
            action = record.machine.confirmationDue(
                token: timer.token, at: timer.due, rules: rules, dwellToken: makeToken())
        case .dwell:
            action = record.machine.dwellDue(token: timer.token, at: timer.due, rules: rules)
        default:
            return
        }
        perform(action, slot: timer.slot, device: timer.device, record: &record)
        store(record, at: recordIndex, device: timer.device)
    }

    private func store(_ record: DeviceTable.RegionRecord, at index: Int, device: Int32) {
        devices.unsettle(device: device)
        if record.isIdle {
            devices.records[Int(device)].remove(at: index)
            // The device's safe disc was measured while this record made the request exempt.
            devices.fixStates[Int(device)].disc.radius = 0
        } else {
            devices.records[Int(device)][index] = record
        }
    }

    /// Performs an action of the region in `slot`, reading its request only now that something happens.
    private func perform(
        _ action: RegionStateMachine.Action, slot: Int32, device: Int32, record: inout DeviceTable.RegionRecord
    ) {
        guard action.output != nil else {
            // Timers only (a streak starting): the request itself, likely out of cache, is not needed.
            schedule(action, slot: slot, device: device)
            return
        }
        perform(action, entry: requests[Int(slot)], device: device, record: &record)
    }

    /// Schedules an action's timers.
    private func schedule(_ action: RegionStateMachine.Action, slot: Int32, device: Int32) {
        if let timer = action.confirmation {
            timers.schedule(.confirmation, due: timer.due, setAt: clock, slot: slot, device: device, token: timer.token)
        }
        if let timer = action.dwell {
            timers.schedule(.dwell, due: timer.due, setAt: clock, slot: slot, device: device, token: timer.token)
        }
    }

    private func perform(
        _ action: RegionStateMachine.Action, entry: RequestEntry, device: Int32, record: inout DeviceTable.RegionRecord
    ) {
        schedule(action, slot: entry.slot, device: device)
        guard let output = action.output else { return }
        switch output {
        case .enter(let since, let time) where flatSlotBuffer[Int(entry.slot)].notifiesOnEntry:
            notify(.enter, entry: entry, device: device, time: time, since: since, record: &record)
        case .exit(let since, let time) where flatSlotBuffer[Int(entry.slot)].notifiesOnExit:
            notify(.exit, entry: entry, device: device, time: time, since: since, record: &record)
        case .dwell(let time):
            notify(.dwell, entry: entry, device: device, time: time, since: nil, record: &record)
        case .state(let inside, let time):
            _ = deliver(
                regionEvent(
                    entry: entry, device: device, kind: .state, time: time, since: nil, record: record,
                    state: inside ? .inside : .outside), for: entry, device: device)
        case .enter, .exit:
            break
        }
    }

    /// Emits a notified event; a non-repeating request is then used up for this device.
    private func notify(
        _ kind: EventKind, entry: RequestEntry, device: Int32, time: Timestamp, since: Timestamp?,
        record: inout DeviceTable.RegionRecord
    ) {
        let event = regionEvent(
            entry: entry, device: device, kind: kind, time: time, since: since, record: record, state: nil)
        guard deliver(event, for: entry, device: device) else { return }
        if !flatSlotBuffer[Int(entry.slot)].repeats {
            record.isDone = true
            states[Int(entry.slot)].finishedDevices += 1
        }
    }

    private func regionEvent(
        entry: RequestEntry, device: Int32, kind: EventKind, time: Timestamp, since: Timestamp?,
        record: DeviceTable.RegionRecord, state: RegionStatus?
    ) -> Event {
        makeEvent(
            kind, for: entry, device: devices.names[Int(device)], time: time, since: since, state: state,
            position: record.lastPosition,
            distance: reportedDistance(slot: entry.slot, to: record.lastPosition.coordinate))
    }

    /// `s(p)` of the fence in `slot`, as events report it, measured through the hot slot (the
    /// region entry's fence is a chain of likely cache misses; the slot was just read).
    private func reportedDistance(slot: Int32, to point: Coordinate) -> Double? {
        let hot = flatSlotBuffer.baseAddress! + Int(slot)
        switch hot.pointee.shape {
        case .circle:
            return snappedToBoundary(hot.pointee.circle.signedDistance(to: point))
        case .polygon:
            let (inside, distance) = polygonContainment(hot.pointee, of: point, measuringWithin: PolygonShape.everyEdge)
            return signedDistance(inside: inside, distance: distance)
        case .other, .none:
            return requests[Int(slot)].region?.fence.signedDistance(to: point)
        }
    }
}
