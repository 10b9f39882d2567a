import Logging

/// Expiry and forgetting (SPEC §12): a request's `expires`, `removeDevice` records and
/// `--device-ttl`. Each ends the stays going on with an `exit` (reason `expired` or `removed`,
/// `since` = `time`) that obeys `notifyOnExit`, schedules and `repeats` as any exit does.
extension Engine {
    /// Schedules a new request's expiry, in every engine of a sharded run (each has devices to
    /// exit); a due time already past fires when the clock next moves.
    func scheduleExpiry(_ entry: RequestEntry) {
        guard let expires = entry.request.expires, !restoring else { return }
        timers.schedule(.expiry, due: expires, setAt: clock, slot: entry.slot, device: -1, token: 0)
    }

    /// The request in `slot` expires at `due`: every device inside it exits, then it leaves pending.
    /// One added with an `expires` already past expires when the clock next moves, its exits
    /// stamped with the clock it was added at (events never go back in time).
    func fireExpiry(_ timer: EngineTimer) {
        guard states[Int(timer.slot)].isAlive, requests[Int(timer.slot)].request.expires == timer.due else { return }
        let time = max(timer.due, timer.setAt)
        for device in 0..<Int32(devices.count) {
            forceExits(device: device, reason: .expired, at: time, onlySlot: timer.slot)
        }
        startCatalog.removeAll { $0.id == requests[Int(timer.slot)].id }
        retire(timer.slot)
        requestLogger?.debug("request expired", metadata: ["request": "\(requests[Int(timer.slot)].id)"])
    }

    /// Starts a device's time to live at its first valid reading (or its first since it was
    /// forgotten); the timer moves on by itself when it finds the device spoke since.
    func startTimeToLive(device: Int32, at time: Timestamp) {
        guard let ttl = configuration.deviceTTL else { return }
        timers.schedule(.deviceTTL, due: time.advanced(by: ttl), setAt: clock, slot: -1, device: device, token: 0)
    }

    /// A device's time to live may have run out: forgotten when it has not spoken since (a
    /// reading stamped exactly at the due time keeps it), else the timer waits for the new end.
    func fireTimeToLive(_ timer: EngineTimer) {
        guard let ttl = configuration.deviceTTL, let last = devices.fixStates[Int(timer.device)].lastTime else {
            return
        }
        let end = last.advanced(by: ttl)
        if end > timer.due {
            timers.schedule(.deviceTTL, due: end, setAt: clock, slot: -1, device: timer.device, token: 0)
            return
        }
        forget(device: timer.device, reason: .expired, at: timer.due)
    }

    /// `removeDevice`: each named device that the engine knows is forgotten now.
    func removeDevices(_ names: [String]) {
        guard let time = clock else { return }
        for name in names {
            guard let device = devices.id(of: name), devices.fixStates[Int(device)].lastTime != nil else { continue }
            forget(device: device, reason: .removed, at: time)
        }
    }

    /// Exits every stay of the device, then frees all of its state but its visit counts: its
    /// next reading is a first reading, not stale, and finds no `repeats: false` use.
    func forget(device: Int32, reason: EventReason, at time: Timestamp) {
        forceExits(device: device, reason: reason, at: time, onlySlot: nil)
        for record in devices.records[Int(device)] where record.isDone {
            states[Int(record.slot)].finishedDevices -= 1
        }
        for record in devices.beaconRecords[Int(device)] where record.isDone {
            states[Int(record.slot)].finishedDevices -= 1
        }
        for binding in proximity { binding.state.forget(device) }
        devices.forget(device: device)
    }

    /// An `exit` for every stay of the device that is inside (of the request in `onlySlot`, or of
    /// all): region and beacon records and proximity pairs alike, a stay begun silently or with an
    /// exit pending too.
    /// The record is left outside, its timers void.
    func forceExits(device: Int32, reason: EventReason, at time: Timestamp, onlySlot: Int32?) {
        let regions = devices.records[Int(device)]
        for (index, record) in regions.enumerated() where record.machine.isInside && !record.isDone {
            guard onlySlot == nil || record.slot == onlySlot, states[Int(record.slot)].isAlive else { continue }
            var exited = record
            exited.machine = RegionStateMachine()
            exited.insideAfterLastFix = false
            let action = RegionStateMachine.Action(output: .exit(since: time, time: time), reason: reason)
            perform(action, entry: requests[Int(record.slot)], device: device, record: &exited)
            devices.records[Int(device)][index] = exited
            if let tracer, tracer.request == requests[Int(record.slot)].id, isTraced(device: device) {
                tracer.record(
                    RegionTraceStep(
                        cause: .forcedExit(reason: reason, time: time), before: .inside, after: .outside,
                        streakBefore: record.machine.pendingStreak.map { .init(since: $0.since, fixes: $0.fixes) },
                        awaitsDwell: false, isDone: exited.isDone))
            }
        }
        devices.unsettle(device: device)
        devices.fixStates[Int(device)].disc.radius = 0
        let beacons = devices.beaconRecords[Int(device)]
        for (index, record) in beacons.enumerated() where record.machine.isInside && !record.isDone {
            guard onlySlot == nil || record.slot == onlySlot, states[Int(record.slot)].isAlive,
                let trigger = requests[Int(record.slot)].beacon?.trigger
            else { continue }
            var exited = record
            exited.machine = BeaconStateMachine()
            let visit = exited.visit
            exited.visit = 0
            devices.beaconRecords[Int(device)][index] = exited
            guard trigger.notifyOnExit else { continue }
            let entry = requests[Int(record.slot)]
            let event = makeEvent(
                .exit, for: entry, device: devices.names[Int(device)], time: time, since: time,
                beacon: record.lastReport, reason: reason, visit: visit,
                duration: visit > 0 ? TimeSpan(microseconds: time.microseconds - record.staySince.microseconds) : nil)
            guard deliver(event, for: entry, device: device), !trigger.repeats else { continue }
            devices.beaconRecords[Int(device)][index].isDone = true
            states[Int(record.slot)].finishedDevices += 1
        }
        if !proximity.isEmpty { forceProximityExits(device: device, reason: reason, at: time, onlySlot: onlySlot) }
    }
}
