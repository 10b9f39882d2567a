/// Region timers (delays, dwells) and what a region state machine's actions do: schedule timers,
/// store the record, emit events.
extension Engine {
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
        case .expiry: fireExpiry(timer)
        case .deviceTTL: fireTimeToLive(timer)
        case .pairEnter, .pairExit, .pairAge: firePair(timer)
        }
    }

    func fireRegion(_ timer: EngineTimer) {
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

    func store(_ record: DeviceTable.RegionRecord, at index: Int, device: Int32) {
        devices.unsettle(device: device)
        if record.isIdle {
            devices.removeRecord(at: index, device: device)
            // The device's safe disc was measured while this record made the request exempt.
            devices.fixStates[Int(device)].disc.radius = 0
        } else {
            devices.records[Int(device)][index] = record
        }
    }

    /// Performs an action of the region in `slot`, reading its request only now that something happens.
    func perform(
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
    func schedule(_ action: RegionStateMachine.Action, slot: Int32, device: Int32) {
        if let timer = action.confirmation {
            timers.schedule(.confirmation, due: timer.due, setAt: clock, slot: slot, device: device, token: timer.token)
        }
        if let timer = action.dwell {
            timers.schedule(.dwell, due: timer.due, setAt: clock, slot: slot, device: device, token: timer.token)
        }
    }

    func perform(
        _ action: RegionStateMachine.Action, entry: RequestEntry, device: Int32, record: inout DeviceTable.RegionRecord
    ) {
        schedule(action, slot: entry.slot, device: device)
        guard let output = action.output else { return }
        switch output {
        case .enter(let since, let time):
            // Every stay counts, notified or not.
            if record.visit == 0 { startStay(&record, request: entry.id, device: device, since: since) }
            guard flatSlotBuffer[Int(entry.slot)].notifiesOnEntry else { return }
            notify(
                .enter, entry: entry, device: device, time: time, since: since, reason: action.reason, record: &record)
        case .exit(let since, let time):
            let duration =
                record.visit > 0 ? TimeSpan(microseconds: time.microseconds - record.staySince.microseconds) : nil
            let visit = record.visit
            record.visit = 0
            guard flatSlotBuffer[Int(entry.slot)].notifiesOnExit else { return }
            notify(
                .exit, entry: entry, device: device, time: time, since: since, reason: action.reason, visit: visit,
                duration: duration, record: &record)
        case .dwell(let time):
            notify(.dwell, entry: entry, device: device, time: time, since: nil, reason: .delayed, record: &record)
        case .state(let inside, let time):
            if inside && record.visit == 0 { startStay(&record, request: entry.id, device: device, since: time) }
            _ = deliver(
                regionEvent(
                    entry: entry, device: device, kind: .state, time: time, since: nil, record: record,
                    state: inside ? .inside : .outside), for: entry, device: device)
        }
    }

    /// Numbers a stay that begins (SPEC §12 visits): its exit's `duration` runs from `since`.
    func startStay(_ record: inout DeviceTable.RegionRecord, request id: String, device: Int32, since: Timestamp) {
        record.visit = nextVisit(request: id, device: device)
        record.staySince = since
    }

    /// Emits a notified event; a non-repeating request is then used up for this device. An enter
    /// or dwell names the record's stay; an exit names the stay it ended (`visit`).
    func notify(
        _ kind: EventKind, entry: RequestEntry, device: Int32, time: Timestamp, since: Timestamp?,
        reason: EventReason?, visit: Int32? = nil, duration: TimeSpan? = nil, record: inout DeviceTable.RegionRecord
    ) {
        var event = regionEvent(
            entry: entry, device: device, kind: kind, time: time, since: since, record: record, state: nil)
        event.reason = reason
        let stay = visit ?? record.visit
        event.visit = stay > 0 ? Int(stay) : nil
        event.duration = duration
        guard deliver(event, for: entry, device: device) else { return }
        if !flatSlotBuffer[Int(entry.slot)].repeats {
            record.isDone = true
            states[Int(entry.slot)].finishedDevices += 1
        }
    }

    func regionEvent(
        entry: RequestEntry, device: Int32, kind: EventKind, time: Timestamp, since: Timestamp?,
        record: DeviceTable.RegionRecord, state: RegionStatus?
    ) -> Event {
        let position = devices.lastPosition(of: record, device: device)
        return makeEvent(
            kind, for: entry, device: devices.names[Int(device)], time: time, since: since, state: state,
            position: position, distance: reportedDistance(slot: entry.slot, to: position.coordinate))
    }

    /// `s(p)` of the fence in `slot`, as events report it, measured through the hot slot (the
    /// region entry's fence is a chain of likely cache misses; the slot was just read).
    func reportedDistance(slot: Int32, to point: Coordinate) -> Double? {
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
