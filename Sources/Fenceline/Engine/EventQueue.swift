/// Events waiting for their instant to close, then released in SPEC §4 order: by time; within an
/// instant exits, enters, `state`, dwell, cross, fires; then request id, then device; then the
/// order they were produced (so two timers of one pair keep their scheduling order).
struct EventQueue {
    private var pending: [(event: Event, order: Int)] = []
    /// In pass-through mode events are kept as produced for the `produce…` methods.
    let passesThrough: Bool
    private(set) var produced: [ProducedEvent] = []
    /// The earliest pending time: a release before it has nothing to do, so holding many events of
    /// one instant costs nothing per reading (found by fuzzing: it used to rescan them each time).
    private var earliest: Timestamp?
    /// The latest pending time: a release past it takes every pending event without sorting them
    /// into kept and ready (the usual: most instants close with one event or none).
    private var latest: Timestamp?
    private var count = 0
    private(set) var released = 0

    init(passesThrough: Bool = false) {
        self.passesThrough = passesThrough
    }

    /// Queues `event` (or, in pass-through mode, keeps it for ``drainProduced()``); returns its
    /// production order.
    @discardableResult
    mutating func append(_ event: Event, timerBound: Timestamp?) -> Int {
        count += 1
        if passesThrough {
            produced.append(ProducedEvent(event: event, timerBound: timerBound, order: count))
            return count
        }
        pending.append((event, count))
        earliest = min(earliest ?? event.time, event.time)
        latest = max(latest ?? event.time, event.time)
        return count
    }

    var isEmpty: Bool { pending.isEmpty }

    /// The events waiting for their instant to close.
    var pendingCount: Int { pending.count }

    /// Takes the events produced since the last call (pass-through mode).
    mutating func drainProduced() -> [ProducedEvent] {
        // Most readings produce nothing: answer without touching (and so copying) the buffer.
        guard !produced.isEmpty else { return [] }
        defer { produced = [] }
        return produced
    }

    /// Removes and returns, numbered, the events stamped before `limit` (or at it, when
    /// `inclusive`), with the production order of each (which the delivered ledger knows its
    /// entries by until they are numbered).
    mutating func release(before limit: Timestamp?, inclusive: Bool) -> (events: [Event], orders: [Int]) {
        guard let first = earliest else { return ([], []) }
        if let limit, first > limit || (first == limit && !inclusive) { return ([], []) }
        func isReady(_ time: Timestamp) -> Bool {
            guard let limit else { return true }
            return time < limit || (inclusive && time == limit)
        }
        var ready: [(event: Event, order: Int)] = []
        if let latest, isReady(latest) {
            ready = pending
            pending = []
            earliest = nil
            self.latest = nil
        } else {
            var keep: [(event: Event, order: Int)] = []
            earliest = nil
            self.latest = nil
            for item in pending {
                if isReady(item.event.time) {
                    ready.append(item)
                } else {
                    keep.append(item)
                    earliest = min(earliest ?? item.event.time, item.event.time)
                    self.latest = max(self.latest ?? item.event.time, item.event.time)
                }
            }
            pending = keep
        }
        if ready.count > 1 { sortForRelease(&ready) }
        var result: [Event] = []
        result.reserveCapacity(ready.count)
        for item in ready {
            released += 1
            var event = item.event
            event.sequence = released
            result.append(event)
        }
        return (result, ready.map(\.order))
    }

    /// SPEC §4 order, ties in production order.
    private func sortForRelease(_ ready: inout [(event: Event, order: Int)]) {
        ready.sort { a, b in Event.releasePrecedes(a.event, b.event) ?? (a.order < b.order) }
    }
}

extension Event {
    /// SPEC §4's order of events: by time; within an instant exits, enters, `state`, dwell, cross,
    /// fires; then by request id, then by device (its name's bytes, as devices are told apart),
    /// then by a proximity pair's other device.
    /// `nil` when the two tie on all of these, for the caller's own last key (the order in which
    /// they were produced). The one engine's queue and the sharded merge both sort by it.
    package static func releasePrecedes(_ a: Event, _ b: Event) -> Bool? {
        if a.time != b.time { return a.time < b.time }
        if a.kind.rank != b.kind.rank { return a.kind.rank < b.kind.rank }
        if a.requestID != b.requestID { return a.requestID < b.requestID }
        if DeviceNames.precedes(a.device, b.device) { return true }
        if DeviceNames.precedes(b.device, a.device) { return false }
        if DeviceNames.precedes(a.other, b.other) { return true }
        if DeviceNames.precedes(b.other, a.other) { return false }
        return nil
    }
}

extension EventQueue {
    /// The events held for an instant not yet closed, with their production order and the last
    /// number given out: a checkpoint's share.
    var checkpointState: (pending: [(event: Event, order: Int)], produced: Int, released: Int) {
        (pending, count, released)
    }

    /// A queue holding `pending`, having produced `produced` events and numbered `released`.
    init(restoring pending: [(event: Event, order: Int)], produced: Int, released: Int) {
        self.init()
        for item in pending {
            self.pending.append(item)
            earliest = min(earliest ?? item.event.time, item.event.time)
            latest = max(latest ?? item.event.time, item.event.time)
        }
        count = produced
        self.released = released
    }
}
