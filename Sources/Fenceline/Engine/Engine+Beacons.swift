extension Engine {
    /// Applies a sighting to every beacon request whose identity matches: the exact key and the
    /// three wildcards (uuid + major, uuid + minor, uuid alone), found by hash lookup rather than
    /// a scan.
    func apply(_ sighting: BeaconSighting, device: Int32) {
        // RSSI 0 and 127 mean "no reading": such a sighting does not count as seen (SPEC §6).
        guard sighting.rssi != 0 && sighting.rssi != 127, !beaconSlots.isEmpty else { return }
        let identity = sighting.beacon
        for key in [
            BeaconKey(uuid: identity.uuid, major: identity.major, minor: identity.minor),
            BeaconKey(uuid: identity.uuid, major: identity.major, minor: -1),
            BeaconKey(uuid: identity.uuid, major: -1, minor: identity.minor),
            BeaconKey(uuid: identity.uuid, major: -1, minor: -1),
        ] {
            guard let slots = beaconSlots[key] else { continue }
            for slot in slots { evaluate(sighting, slot: slot, device: device) }
        }
    }

    private func evaluate(_ sighting: BeaconSighting, slot: Int32, device: Int32) {
        let entry = requests[Int(slot)]
        let tracer = tracer.flatMap { $0.request == entry.id && isTraced(device: device) ? $0 : nil }
        guard states[Int(slot)].isAlive, let beacon = entry.beacon, entry.applies(to: device) else {
            tracer?.record(
                BeaconTraceStep(
                    cause: .sighting(time: sighting.time, beacon: sighting.beacon, rssi: sighting.rssi),
                    ignored: "the request is scoped to other devices", wasInside: false, isInside: false))
            return
        }
        let trigger = beacon.trigger
        let records = devices.beaconRecords[Int(device)]
        var index = records.firstIndex { $0.slot == slot }
        if index == nil {
            devices.beaconRecords[Int(device)].append(DeviceTable.BeaconRecord(slot: slot))
            index = records.count
        }
        var record = devices.beaconRecords[Int(device)][index!]
        let wasInside = record.machine.isInside
        guard !record.isDone else {
            tracer?.record(
                BeaconTraceStep(
                    cause: .sighting(time: sighting.time, beacon: sighting.beacon, rssi: sighting.rssi),
                    ignored: "repeats is false and the request already notified this device", wasInside: wasInside,
                    isInside: wasInside))
            return
        }
        let time = sighting.time
        record.expireTracks(at: time, filter: trigger.filter, window: trigger.window)
        var track = record.tracks.first { $0.identity == sighting.beacon } ?? .init(identity: sighting.beacon)
        let rssi = track.smoother.add(sighting.rssi, at: time, filter: trigger.filter, window: trigger.window)
        let distance = trigger.distanceModel.distance(rssi: rssi, txPower: sighting.txPower ?? trigger.txPower)
        let proximity = Proximity.classify(distance: distance, previous: track.proximity)
        track.proximity = proximity
        if let position = record.tracks.firstIndex(where: { $0.identity == sighting.beacon }) {
            record.tracks[position] = track
        } else {
            record.tracks.append(track)
        }
        let report = BeaconReport(identity: sighting.beacon, rssi: rssi, distance: distance, proximity: proximity)
        let counts = proximity <= trigger.proximity
        if counts { record.lastCounting = report }
        record.lastReport = report
        let action = record.machine.sighting(counts: counts, at: time, rules: beacon.rules, token: makeToken())
        perform(action, entry: entry, device: device, record: &record)
        tracer?.record(
            BeaconTraceStep(
                cause: .sighting(time: time, beacon: sighting.beacon, rssi: sighting.rssi), report: report,
                counts: counts, wasInside: wasInside, isInside: record.machine.isInside))
        storeBeacon(&record, at: index!, device: device, time: time, trigger: trigger)
    }

    /// Fires a beacon timer: an enter delay, an exit timeout or an exit delay.
    func fireBeacon(_ timer: EngineTimer) {
        let entry = requests[Int(timer.slot)]
        guard states[Int(timer.slot)].isAlive, let beacon = entry.beacon,
            let index = devices.beaconRecords[Int(timer.device)].firstIndex(where: { $0.slot == timer.slot })
        else { return }
        var record = devices.beaconRecords[Int(timer.device)][index]
        guard !record.isDone else { return }
        let trigger = beacon.trigger
        record.expireTracks(at: timer.due, filter: trigger.filter, window: trigger.window)
        let kind: BeaconStateMachine.TimerKind
        switch timer.kind {
        case .beaconEnter: kind = .enter
        case .beaconTimeout: kind = .timeout
        default: kind = .exit
        }
        let wasInside = record.machine.isInside
        let action = record.machine.timerDue(
            kind, token: timer.token, at: timer.due, rules: beacon.rules, nextToken: makeToken())
        perform(action, entry: entry, device: timer.device, record: &record)
        // A timer of a streak or stay that ended before changes nothing: not a step.
        if let tracer, tracer.request == entry.id, isTraced(device: timer.device), action.output != nil {
            let cause: BeaconTraceStep.Cause =
                switch kind {
                case .enter: .enterDelay(due: timer.due)
                case .timeout: .exitTimeout(due: timer.due)
                case .exit: .exitDelay(due: timer.due)
                }
            tracer.record(BeaconTraceStep(cause: cause, wasInside: wasInside, isInside: record.machine.isInside))
        }
        storeBeacon(&record, at: index, device: timer.device, time: timer.due, trigger: trigger)
    }

    /// Stores the record back, or removes it when it holds nothing; a record that has just exited
    /// first lets go of the tracks kept only for their class.
    private func storeBeacon(
        _ record: inout DeviceTable.BeaconRecord, at index: Int, device: Int32, time: Timestamp, trigger: BeaconTrigger
    ) {
        record.expireTracks(at: time, filter: trigger.filter, window: trigger.window)
        if record.machine.isIdle && record.tracks.isEmpty && !record.isDone {
            devices.beaconRecords[Int(device)].remove(at: index)
        } else {
            devices.beaconRecords[Int(device)][index] = record
        }
    }

    private func perform(
        _ action: BeaconStateMachine.Action, entry: RequestEntry, device: Int32, record: inout DeviceTable.BeaconRecord
    ) {
        for timer in action.timers {
            let kind: EngineTimer.Kind
            switch timer.kind {
            case .enter: kind = .beaconEnter
            case .timeout: kind = .beaconTimeout
            case .exit: kind = .beaconExit
            }
            timers.schedule(kind, due: timer.due, setAt: clock, slot: entry.slot, device: device, token: timer.token)
        }
        guard let output = action.output, let trigger = entry.beacon?.trigger else { return }
        let kind: EventKind
        let since: Timestamp
        let time: Timestamp
        let report: BeaconReport?
        var visit = record.visit
        var duration: TimeSpan?
        switch output {
        case .enter(let start, let at):
            // Every stay counts, notified or not.
            visit = nextVisit(request: entry.id, device: device)
            record.visit = visit
            record.staySince = start
            guard trigger.notifyOnEntry else { return }
            (kind, since, time, report) = (.enter, start, at, record.lastCounting)
        case .exit(let start, let at, let byTimeout):
            if visit > 0 { duration = TimeSpan(microseconds: at.microseconds - record.staySince.microseconds) }
            record.visit = 0
            guard trigger.notifyOnExit else { return }
            (kind, since, time, report) = (.exit, start, at, byTimeout ? record.lastCounting : record.lastReport)
        }
        let event = makeEvent(
            kind, for: entry, device: devices.names[Int(device)], time: time, since: since, beacon: report,
            reason: action.reason, visit: visit, duration: duration)
        guard deliver(event, for: entry, device: device) else { return }
        if !trigger.repeats {
            record.isDone = true
            states[Int(entry.slot)].finishedDevices += 1
        }
    }
}
