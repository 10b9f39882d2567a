extension Engine {
    /// Emits `event` (of the interned `device`, -1 for none) unless the request's schedule is closed
    /// at its time; returns whether it was delivered. A muted event leaves no delivered entry and
    /// uses nothing up (SPEC §7).
    func deliver(_ event: Event, for entry: RequestEntry, device: Int32) -> Bool {
        guard entry.mayNotify(at: event.time) else { return false }
        let order = events.append(event, timerBound: firingBound)
        delivered.add(event, device: device, order: order)
        // A time or calendar request's notifications are traced whatever device they are for.
        if let tracer, event.requestID == tracer.request,
            event.device == tracer.device || event.other == tracer.device || event.trigger == .timeInterval
                || event.trigger == .calendar
        {
            tracer.delivered.append(event)
        }
        return true
    }

    /// The request's content filled in for one event, with its category's actions.
    func makeEvent(
        _ kind: EventKind, for entry: RequestEntry, device: String?, time: Timestamp, since: Timestamp? = nil,
        state: RegionStatus? = nil, position: Position? = nil, distance: Double? = nil, beacon: BeaconReport? = nil,
        reason: EventReason? = nil, visit: Int32 = 0, duration: TimeSpan? = nil, other: String? = nil
    ) -> Event {
        let content = entry.content
        return Event(
            time: time, requestID: entry.id, device: device, trigger: entry.triggerKind, kind: kind,
            since: since, state: state, position: position, distance: distance, beacon: beacon,
            content: content.rendered(
                device: device, request: entry.id, event: kind.rawValue, time: time, other: other),
            actions: content.category.flatMap { categories[$0]?.actions } ?? [], reason: reason,
            visit: visit > 0 ? Int(visit) : nil, duration: duration, other: other)
    }

    /// The number of a new stay of `device` for the request `id` (SPEC §12 visits): one more than
    /// the last, whether or not that one was notified, kept through forgetting and replacement.
    func nextVisit(request id: String, device: Int32) -> Int32 {
        let number = visitNumber(of: id)
        let key = VisitKey.make(request: number, device: device)
        var last = visitCounters[key]
        if last == nil && !forgottenVisits.isEmpty {
            last = forgottenVisits.removeValue(
                forKey: ForgottenVisit(device: DeviceName(name: devices.names[Int(device)]), request: number))
        }
        let next = (last ?? 0) + 1
        visitCounters[key] = next
        return next
    }

    /// The number of a request id in `visitIDs`, given when first asked.
    func visitNumber(of id: String) -> UInt32 {
        if let number = visitIDs[id] { return number }
        let number = UInt32(visitNames.count)
        visitIDs[id] = number
        visitNames.append(id)
        return number
    }

    /// Fires a time-interval or calendar trigger: one notification per scoped device (or one with
    /// no device), then the next due time; a non-repeating request is then delivered and done.
    func fireTiming(_ timer: EngineTimer) {
        let entry = requests[Int(timer.slot)]
        let state = states[Int(timer.slot)]
        guard state.isAlive, let timing = entry.timing, timer.token == state.timerToken else { return }
        if let tracer, tracer.request == entry.id {
            let muted = !entry.mayNotify(at: timer.due)
            fireTimingUntraced(timer, entry: entry, timing: timing)
            let next = states[Int(timer.slot)].isAlive ? states[Int(timer.slot)].nextFire : nil
            tracer.nextDue = next
            tracer.record(TimingTraceStep(due: timer.due, muted: muted, next: next))
            return
        }
        fireTimingUntraced(timer, entry: entry, timing: timing)
    }

    private func fireTimingUntraced(_ timer: EngineTimer, entry: RequestEntry, timing: TimingEntry) {
        let due = timer.due
        let names: [String?] = entry.scopeNames ?? [nil]
        if entry.mayNotify(at: due) {
            for name in names {
                if let ownership = timingOwnership, !(name.map(ownership.owns) ?? ownership.unscoped) { continue }
                // A scoped name was interned when the request was added: this finds its id.
                let device = name.map { devices.intern($0) } ?? -1
                _ = deliver(makeEvent(.fire, for: entry, device: name, time: due), for: entry, device: device)
            }
            if !timing.repeats {
                states[Int(entry.slot)].isFinished = true
                states[Int(entry.slot)].nextFire = nil
                return
            }
            scheduleTiming(entry, at: timing.nextDue(after: due))
            return
        }
        // Muted by the schedule: a repeating trigger goes on; a one-shot one is not used up, so it
        // fires at the next match (calendar) or when the schedule next opens (time interval).
        if timing.repeats {
            scheduleTiming(entry, at: timing.nextDue(after: due))
        } else if case .calendar = timing.rule {
            scheduleTiming(entry, at: timing.nextDue(after: due))
        } else {
            scheduleTiming(entry, at: entry.gate?.nextOpening(after: due))
        }
    }

    func scheduleTiming(_ entry: RequestEntry, at due: Timestamp?) {
        let slot = Int(entry.slot)
        states[slot].nextFire = due
        if let tracer, tracer.request == entry.id { tracer.nextDue = due }
        guard let due else { return }
        states[slot].timerToken = makeToken()
        timers.schedule(.timing, due: due, setAt: clock, slot: entry.slot, device: -1, token: states[slot].timerToken)
    }

    // MARK: Pending and delivered (UserNotifications-style management)

    /// The requests that can still fire, in the order they were added. Before the first reading,
    /// control records wait for the clock (SPEC §7); what they will do is shown here already.
    public var pendingRequests: [NotificationRequest] {
        previewUntimedControls(.all).pending
    }

    /// How many requests ``pendingRequests`` lists, counted without listing them unless an untimed
    /// control record waits: a checkpoint's summary and a service's `/metrics` read it, where a
    /// list (a copy of every request of a large catalog) would hold the engine up.
    public var pendingRequestCount: Int {
        guard untimedControls.isEmpty else { return pendingRequests.count }
        return requests.reduce(startCatalog.count) { $0 + (canStillFire($1) ? 1 : 0) }
    }

    /// The pending request `id` (as ``pendingRequests`` would list it), found without listing them.
    public func pendingRequest(withIdentifier id: String) -> NotificationRequest? {
        previewUntimedControls(.withID(id)).pending.last
    }

    /// Whether the request `id` is among ``pendingRequests``, found without listing them.
    public func isPending(_ id: String) -> Bool {
        pendingRequest(withIdentifier: id) != nil
    }

    /// Which pending requests ``previewUntimedControls(_:)`` lists.
    enum PendingPreview { case all, withID(String), noRequests }

    /// The pending requests (all, one id's or none) and the category set, as they will be once the
    /// control records waiting for the clock have run: the one walk over those records that
    /// ``pendingRequests``, ``isPending(_:)`` and ``notificationCategories`` share.
    func previewUntimedControls(
        _ scope: PendingPreview
    ) -> (pending: [NotificationRequest], categories: [NotificationCategory]?) {
        var pending: [NotificationRequest]
        let only: String?
        switch scope {
        case .all:
            only = nil
            pending = requests.filter(canStillFire).map(\.request) + startCatalog
        case .withID(let id):
            only = id
            pending = (liveSlot(ofRequest: id).map { [requests[Int($0)]] } ?? []).filter(canStillFire).map(\.request)
            pending += startCatalog.filter { $0.id == id }
        case .noRequests:
            only = nil
            pending = []
        }
        var categories: [NotificationCategory]?
        for control in untimedControls {
            switch control.operation {
            case .add(let request):
                if case .noRequests = scope { continue }
                guard only == nil || request.id == only else { continue }
                pending.removeAll { $0.id == request.id }
                pending.append(request)
            case .removePending(let ids): pending.removeAll { ids.contains($0.id) }
            case .removeAllPending: pending.removeAll()
            case .setCategories(let list): categories = list
            case .removeDelivered, .removeAllDelivered, .tick, .respond, .removeDevice: break
            }
        }
        return (pending, categories)
    }

    /// Whether `entry` is still pending: live, not finished, not used up by every device of its
    /// scope, and (a time trigger) with a date still to come by its `expires`.
    func canStillFire(_ entry: RequestEntry) -> Bool {
        let state = states[Int(entry.slot)]
        guard state.isAlive, !state.isFinished else { return false }
        if let scope = entry.scopeNames, state.finishedDevices >= scope.count { return false }
        if entry.timing != nil, clock != nil {
            guard let next = state.nextFire else { return false }
            if let expires = entry.request.expires, next > expires { return false }
        }
        return true
    }

    /// The next time a pending time-interval or calendar request fires (`nil` for other triggers,
    /// for unknown ids, and before the first reading has set the clock).
    ///
    /// For a request with a `schedule` it is the first due time inside a window, found the way
    /// ``fireTiming(_:)`` moves past muted ones (SPEC §7); `nil` when none comes within
    /// ``scheduledSearchLimit`` window openings, or when it comes after the request's `expires`
    /// (a timer due at that instant still fires: the expiry comes after the instant's timers).
    public func nextTriggerDate(forRequest id: String) -> Timestamp? {
        guard let slot = liveSlot(ofRequest: id), let due = nextScheduledFire(slot: slot) else { return nil }
        if let expires = requests[Int(slot)].request.expires, due > expires { return nil }
        return due
    }

    /// The next due time of the timed request in `slot` that its schedule lets fire.
    private func nextScheduledFire(slot: Int32) -> Timestamp? {
        guard var due = states[Int(slot)].nextFire else { return nil }
        let entry = requests[Int(slot)]
        guard let gate = entry.gate, let timing = entry.timing else { return due }
        for _ in 0..<Self.scheduledSearchLimit {
            if gate.isOpen(at: due) { return due }
            // Closed until the next opening, so every due time before it is muted too.
            guard let opening = gate.nextOpening(after: due) else { return nil }
            if case .interval = timing.rule, !timing.repeats {
                due = opening
            } else {
                guard let next = timing.nextDue(after: opening.advanced(by: TimeSpan(microseconds: -1))) else {
                    return nil
                }
                due = next
            }
        }
        return nil
    }

    /// Window openings ``nextTriggerDate(forRequest:)`` looks through: decades of a weekly schedule.
    static let scheduledSearchLimit = 20_000

    /// The delivered notifications, newest first (at most the configured number per device).
    public var deliveredNotifications: [Event] { delivered.events }

    /// Whether ``deliveredNotifications`` lists a notification of request `id`.
    public func hasDeliveredNotifications(ofRequest id: String) -> Bool {
        delivered.listsEntries(of: id)
    }

    /// Removes delivered notifications by request id; pending requests are untouched.
    public func removeDeliveredNotifications(withIdentifiers ids: [String]) {
        delivered.remove(requestIDs: Set(ids))
    }

    /// Removes every delivered notification.
    public func removeAllDeliveredNotifications() {
        delivered.removeAll()
    }
}
