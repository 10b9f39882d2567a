import HeapModule
import Logging

extension Engine {
    /// Applies a reading the reorder window let out, its request-level `maxFuture` measured by
    /// the lead it had when it arrived (SPEC §12), not against the clock behind the window.
    func apply(_ released: ReorderBuffer.Released) {
        arrivalLead = .some(released.lead)
        defer { arrivalLead = nil }
        apply(released.reading)
    }

    /// Applies a reading at its time (or a control record at the clock).
    func apply(_ reading: Reading) {
        switch reading {
        case .fix(let fix): apply(fix)
        case .sighting(let sighting):
            let device = devices.intern(sighting.device)
            guard admit(device: device, at: sighting.time) else { return }
            apply(sighting, device: device)
        case .control(let control):
            guard let time = control.time ?? clock else {
                // Nothing is delivered before the first clock: an answer then is refused at once
                // (in every mode alike), not held for it.
                if case .respond(let response) = control.operation {
                    noteOutcome(ResponseOutcome(response: response, refusal: .nothingDelivered, event: nil))
                    return
                }
                // No clock yet: applied when the first timed line sets it.
                untimedControls.append(control)
                return
            }
            moveClock(to: time)
            guard !stoppedInJump else { return }
            applySequence += 1
            statistics.applied += 1
            // A driver's own tick only brings an engine's clock up to time.
            guard !control.movesClockOnly else { return }
            apply(control.operation)
        }
    }

    /// Applies one fix: the reading most streams are made of, which callers holding a ``Fix``
    /// pass straight here rather than wrapped in a ``Reading`` (copying the enum in and out showed
    /// in profiles).
    func apply(_ fix: Fix) {
        admitAndApply(fix, device: devices.intern(fix.device))
    }

    /// ``apply(_:)`` of a fix whose device is named by UTF-8 bytes, interned without making a
    /// `String` of a name already seen (the fix gets the interned one).
    @inline(__always)
    func apply(deviceNamed name: UnsafeBufferPointer<UInt8>, time: Timestamp, coordinate: Coordinate, accuracy: Double?)
    {
        let device = devices.intern(bytes: name)
        admitAndApply(
            Fix(device: devices.names[Int(device)], time: time, coordinate: coordinate, accuracy: accuracy),
            device: device)
    }

    /// ``apply(_:)`` of a fix whose device is interned already.
    func admitAndApply(_ fix: Fix, device: Int32) {
        if let tracer, isTraced(device: device) {
            guard admit(device: device, at: fix.time) else {
                tracer.record(
                    RegionTraceStep(
                        cause: .staleFix(fix), ignored: "stale: older than the device's last reading",
                        before: .unknown, after: .unknown, awaitsDwell: false, isDone: false))
                return
            }
            return applyTraced(fix, device: device, tracer: tracer)
        }
        guard admit(device: device, at: fix.time) else { return }
        apply(fix, device: device)
    }

    /// Stale check and clock move shared by every per-device reading.
    private func admit(device: Int32, at time: Timestamp) -> Bool {
        if let last = devices.fixStates[Int(device)].lastTime, time < last {
            statistics.stale += 1
            logger.trace(
                "stale reading", metadata: ["device": "\(devices.names[Int(device)])", "time": "\(time.rfc3339)"])
            return false
        }
        fixLead = arrivalLead ?? clock.map { TimeSpan(microseconds: time.microseconds - $0.microseconds) }
        moveClock(to: time)
        guard !stoppedInJump else { return false }
        if devices.recordReading(device: device, at: time), configuration.deviceTTL != nil {
            startTimeToLive(device: device, at: time)
        }
        applySequence += 1
        statistics.applied += 1
        return true
    }

    /// Moves the clock forward to `time`, first firing the timers due before it. The first time
    /// sets the clock and adds the start catalog there, then any untimed control records.
    func moveClock(to time: Timestamp) {
        guard let current = clock else {
            clock = time
            let catalog = startCatalog
            startCatalog = []
            bulkInstalling = true
            installAll(catalog, at: time)
            bulkInstalling = false
            index.rebuild()
            crossIndex.rebuild()
            let pending = untimedControls
            untimedControls = []
            for control in pending {
                applySequence += 1
                statistics.applied += 1
                apply(control.operation)
            }
            // A tick before the first clock had no instant to close.
            tickClosesInstant = false
            return
        }
        guard time > current else { return }
        fireTimers(before: time, inclusive: false)
        guard !stoppedInJump else { return }
        clock = time
    }

    /// Fires, in due-time then scheduling order, every timer due before `limit` (or at it).
    ///
    /// With a ``spill`` set, a long run of timers (a clock jump: one reading or `--until` far
    /// ahead of a repeating timer) hands its events out whenever an instant is complete and 1,024
    /// wait, or every 65,536 timers, so memory stays bounded; `spill` answering `false` stops the
    /// clock there.
    func fireTimers(before limit: Timestamp, inclusive: Bool) {
        guard !stoppedInJump else { return }
        defer { firingBound = nil }
        var fired = 0
        while let timer = timers.popDue(before: limit, inclusive: inclusive) {
            if let current = clock, timer.due > current { clock = timer.due }
            firingBound = max(timer.due, timer.setAt)
            fire(timer)
            fired += 1
            guard let spill, events.pendingCount >= 1024 || fired & 0xFFFF == 0,
                timers.nextDue.map({ $0 > timer.due }) ?? true
            else { continue }
            // Every timer of this instant has fired and time only moves on: its events are final.
            firingBound = nil
            if !spill(release(before: timer.due, inclusive: true)) {
                stoppedInJump = true
                return
            }
        }
    }
}
