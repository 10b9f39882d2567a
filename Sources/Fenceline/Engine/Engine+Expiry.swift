import Logging

/// Expiry and forgetting (SPEC §12): a request's `expires`, `removeDevice` records and
/// `--device-ttl`. Each ends the stays going on with an `exit` (reason `expired` or `removed`,
/// `since` = `time`) that obeys `notifyOnExit`, schedules and `repeats` as any exit does.
extension Engine {
    /// Schedules a new request's expiry, in every engine of a sharded run (each has devices to
    /// exit).
    func scheduleExpiry(_ entry: RequestEntry) {
        guard let expires = entry.request.expires, !restoring else { return }
        timers.schedule(.expiry, due: expires, setAt: clock, slot: entry.slot, device: -1, token: 0)
    }

    /// The request in `slot` expires at `due`: every device inside it exits, then it leaves pending.
    /// Exits are never stamped before the clock the timer was set at: events never go back in time.
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
        delivered.forget(device: device)
        devices.forget(device: device)
    }

    /// Renumbers the devices when many were forgotten since it was last done (at least
    /// ``renumberingMinimum`` and half of the devices), so each renumbering is paid for by the
    /// forgetting of as many devices as it keeps; and once after a restore that listed forgotten
    /// devices. Called where no device number is held: at the end of each call that may forget
    /// devices.
    @inline(__always)
    func renumberDevicesIfDue() {
        let forgotten = devices.forgottenSinceRenumbering
        guard forgotten >= renumberingMinimum && forgotten * 2 >= devices.count || renumberingAfterRestore else {
            return
        }
        renumberDevices()
    }

    /// Drops every device the engine holds nothing of (SPEC §12: forgetting frees a device's
    /// state), renumbering the others in their order everywhere a number is kept, and moves the
    /// visit counters of the dropped ones to ``forgottenVisits``. A device is kept while it has a
    /// last reading, records, filter references, delivered notifications or proximity state, or
    /// a live request names it in `devices` (a retired request's scope keeps the devices left).
    func renumberDevices() {
        renumberingAfterRestore = false
        var keep = [Bool](repeating: false, count: devices.count)
        for device in keep.indices {
            keep[device] = devices.isKnown(device) || devices.filterOverrides[Int32(device)] != nil
        }
        for (slot, entry) in requests.enumerated() where states[slot].isAlive {
            for device in entry.scope ?? [] { keep[Int(device)] = true }
        }
        for binding in proximity {
            for device in 0..<binding.state.memberCount where binding.state.holds(Int32(device)) {
                keep[device] = true
            }
        }
        delivered.markDevices(in: &keep)
        guard keep.contains(false) else {
            devices.forgottenSinceRenumbering = 0
            return
        }
        let names = devices.names
        let newID = devices.renumber(keeping: keep)
        timers.renumber(newID)
        delivered.renumber(newID)
        for binding in proximity { binding.state.renumber(newID, count: devices.count) }
        for (slot, entry) in requests.enumerated() {
            guard let scope = entry.scope else { continue }
            requests[slot] = entry.replacing(scope: Set(scope.lazy.map { newID[Int($0)] }.filter { $0 >= 0 }))
        }
        var counters: [UInt64: Int32] = [:]
        counters.reserveCapacity(visitCounters.count)
        for (key, count) in visitCounters {
            let device = newID[Int(VisitKey.device(of: key))]
            if device >= 0 {
                counters[VisitKey.make(request: VisitKey.request(of: key), device: device)] = count
            } else {
                let name = names[Int(VisitKey.device(of: key))]
                forgottenVisits[ForgottenVisit(device: DeviceName(name: name), request: VisitKey.request(of: key))] =
                    count
            }
        }
        visitCounters = counters
        renumberings += 1
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

/// A visit counter of a device dropped by renumbering: its name and its request's number in
/// `Engine.visitIDs`.
struct ForgottenVisit: Hashable {
    let device: DeviceName
    let request: UInt32
}
