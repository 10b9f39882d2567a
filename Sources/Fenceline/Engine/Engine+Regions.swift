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
        if index.count > 0 {
            let point = fix.coordinate
            if widening > 0 && accuracy > 0 {
                let box = GeoBounds(
                    south: point.latitude, north: point.latitude, west: point.longitude, east: point.longitude)
                index.query(bounds: box.expanded(byMetres: accuracy), into: &candidates)
            } else {
                index.query(latitude: point.latitude, longitude: point.longitude, into: &candidates)
            }
        }
        for record in devices.records[Int(device)] { candidates.append(record.slot) }
        let crosses = crossIndex.count > 0 ? pendingCrosses(fix, device: device, accuracy: accuracy) : []
        for slot in candidates where visited[Int(slot)] != visitStamp {
            visited[Int(slot)] = visitStamp
            evaluate(slot: slot, device: device, fix: fix, accuracy: accuracy)
        }
        for slot in stateSlots where visited[Int(slot)] != visitStamp {
            evaluate(slot: slot, device: device, fix: fix, accuracy: accuracy)
        }
        for cross in crosses { confirmCross(slot: cross.slot, distance: cross.distance, device: device, fix: fix) }
        devices.accept(device: device, coordinate: fix.coordinate, accuracy: accuracy, sequence: sequence)
    }

    private func evaluate(slot: Int32, device: Int32, fix: Fix, accuracy: Double) {
        let entry = requests[Int(slot)]
        let recordIndex = devices.recordIndex(device: device, slot: slot)
        guard entry.isAlive, let region = entry.region else {
            if let recordIndex { devices.records[Int(device)].remove(at: recordIndex) }
            return
        }
        guard entry.applies(to: device), accuracy <= region.maxAccuracy else { return }
        if let recordIndex, devices.records[Int(device)][recordIndex].isDone { return }
        let condition = region.condition(point: fix.coordinate, accuracy: accuracy)
        let position = Position(coordinate: fix.coordinate, accuracy: fix.accuracy)
        if let recordIndex {
            var record = devices.records[Int(device)][recordIndex]
            let action = record.machine.fix(condition, at: fix.time, rules: region.rules, token: makeToken())
            record.lastPosition = position
            record.insideAfterLastFix = record.machine.isInside
            perform(action, entry: entry, region: region, device: device, record: &record)
            store(record, at: recordIndex, device: device)
            return
        }
        let known = devices.acceptedFix(device: device, bucket: region.bucket).sequence > entry.addedSequence
        var machine: RegionStateMachine
        let action: RegionStateMachine.Action
        if known {
            // Known to be outside: only a fix meeting the enter condition starts anything.
            guard condition == .enter else { return }
            machine = RegionStateMachine()
            action = machine.fix(condition, at: fix.time, rules: region.rules, token: makeToken())
        } else {
            (machine, action) = RegionStateMachine.first(
                condition, at: fix.time, policy: region.trigger.initial, rules: region.rules, token: makeToken())
        }
        var record = DeviceTable.RegionRecord(
            slot: slot, machine: machine, insideAfterLastFix: machine.isInside, lastPosition: position)
        perform(action, entry: entry, region: region, device: device, record: &record)
        if !record.isIdle { devices.records[Int(device)].append(record) }
    }

    /// Fires a timer: a region streak's delay or a visit's dwell, or a beacon timer.
    func fire(_ timer: EngineTimer) {
        switch timer.kind {
        case .confirmation, .dwell: fireRegion(timer)
        case .beaconEnter, .beaconTimeout, .beaconExit: fireBeacon(timer)
        case .timing: fireTiming(timer)
        }
    }

    private func fireRegion(_ timer: EngineTimer) {
        let entry = requests[Int(timer.slot)]
        guard entry.isAlive, let region = entry.region,
            let recordIndex = devices.recordIndex(device: timer.device, slot: timer.slot)
        else { return }
        var record = devices.records[Int(timer.device)][recordIndex]
        guard !record.isDone else { return }
        let action: RegionStateMachine.Action
        switch timer.kind {
        case .confirmation:
            action = record.machine.confirmationDue(
                token: timer.token, at: timer.due, rules: region.rules, dwellToken: makeToken())
        case .dwell:
            action = record.machine.dwellDue(token: timer.token, at: timer.due, rules: region.rules)
        default:
            return
        }
        perform(action, entry: entry, region: region, device: timer.device, record: &record)
        store(record, at: recordIndex, device: timer.device)
    }

    private func store(_ record: DeviceTable.RegionRecord, at index: Int, device: Int32) {
        if record.isIdle {
            devices.records[Int(device)].remove(at: index)
        } else {
            devices.records[Int(device)][index] = record
        }
    }

    private func perform(
        _ action: RegionStateMachine.Action, entry: RequestEntry, region: RegionEntry, device: Int32,
        record: inout DeviceTable.RegionRecord
    ) {
        if let timer = action.confirmation {
            timers.schedule(.confirmation, due: timer.due, slot: entry.slot, device: device, token: timer.token)
        }
        if let timer = action.dwell {
            timers.schedule(.dwell, due: timer.due, slot: entry.slot, device: device, token: timer.token)
        }
        guard let output = action.output else { return }
        let trigger = region.trigger
        switch output {
        case .enter(let since, let time) where trigger.notifyOnEntry:
            notify(.enter, entry: entry, device: device, time: time, since: since, record: &record)
        case .exit(let since, let time) where trigger.notifyOnExit:
            notify(.exit, entry: entry, device: device, time: time, since: since, record: &record)
        case .dwell(let time):
            notify(.dwell, entry: entry, device: device, time: time, since: nil, record: &record)
        case .state(let inside, let time):
            _ = deliver(
                regionEvent(
                    entry: entry, device: device, kind: .state, time: time, since: nil, record: record,
                    state: inside ? .inside : .outside), for: entry)
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
        guard deliver(event, for: entry) else { return }
        if entry.region?.trigger.repeats == false {
            record.isDone = true
            entry.finishedDevices += 1
        }
    }

    private func regionEvent(
        entry: RequestEntry, device: Int32, kind: EventKind, time: Timestamp, since: Timestamp?,
        record: DeviceTable.RegionRecord, state: RegionStatus?
    ) -> Event {
        makeEvent(
            kind, for: entry, device: devices.names[Int(device)], time: time, since: since, state: state,
            position: record.lastPosition,
            distance: entry.region?.fence.signedDistance(to: record.lastPosition.coordinate))
    }
}
