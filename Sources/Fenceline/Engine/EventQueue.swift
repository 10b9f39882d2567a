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
    private var count = 0
    private(set) var released = 0

    init(passesThrough: Bool = false) {
        self.passesThrough = passesThrough
    }

    mutating func append(_ event: Event, timerBound: Timestamp?) {
        if passesThrough {
            produced.append(ProducedEvent(event: event, timerBound: timerBound))
            return
        }
        count += 1
        pending.append((event, count))
        earliest = min(earliest ?? event.time, event.time)
    }

    var isEmpty: Bool { pending.isEmpty }

    /// Takes the events produced since the last call (pass-through mode).
    mutating func drainProduced() -> [ProducedEvent] {
        // Most readings produce nothing: answer without touching (and so copying) the buffer.
        guard !produced.isEmpty else { return [] }
        defer { produced = [] }
        return produced
    }

    /// Removes and returns, numbered, the events stamped before `limit` (or at it, when `inclusive`).
    mutating func release(before limit: Timestamp?, inclusive: Bool) -> [Event] {
        guard let first = earliest else { return [] }
        if let limit, first > limit || (first == limit && !inclusive) { return [] }
        var ready: [(event: Event, order: Int)] = []
        if let limit {
            var keep: [(event: Event, order: Int)] = []
            for item in pending {
                if item.event.time < limit || (inclusive && item.event.time == limit) {
                    ready.append(item)
                } else {
                    keep.append(item)
                }
            }
            pending = keep
        } else {
            ready = pending
            pending = []
        }
        earliest = pending.map(\.event.time).min()
        ready.sort { a, b in
            if a.event.time != b.event.time { return a.event.time < b.event.time }
            if a.event.kind.rank != b.event.kind.rank { return a.event.kind.rank < b.event.kind.rank }
            if a.event.requestID != b.event.requestID { return a.event.requestID < b.event.requestID }
            let deviceA = a.event.device ?? ""
            let deviceB = b.event.device ?? ""
            if deviceA != deviceB { return deviceA < deviceB }
            return a.order < b.order
        }
        return ready.map { item in
            released += 1
            var event = item.event
            event.sequence = released
            return event
        }
    }
}
