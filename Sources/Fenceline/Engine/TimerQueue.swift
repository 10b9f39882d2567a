import HeapModule

/// A timer the engine is waiting for: due time, scheduling order, and what it belongs to.
struct EngineTimer: Comparable {
    enum Kind: UInt8 {
        /// A region streak's delay has passed.
        case confirmation
        /// A region visit's dwell time has passed.
        case dwell
        /// A beacon enter delay has passed.
        case beaconEnter
        /// A beacon region has gone unseen for its exit timeout.
        case beaconTimeout
        /// Beacon sightings have stopped counting for the exit delay.
        case beaconExit
        /// A time-interval or calendar trigger is due.
        case timing
        /// A request's `expires` has come (SPEC §12).
        case expiry
        /// A device may have been silent for `--device-ttl` (SPEC §12).
        case deviceTTL
        /// A proximity pair's enter delay has passed.
        case pairEnter
        /// A proximity pair's exit delay has passed.
        case pairExit
        /// A proximity pair's older fix may have grown older than `maxAge`.
        case pairAge

        /// Whether the timer belongs to a proximity pair (and names its other device).
        var isPair: Bool { self == .pairEnter || self == .pairExit || self == .pairAge }

        /// Whether the timer forces exits, which at one instant follow every other timer.
        var isLast: Bool { self == .expiry || self == .deviceTTL }
    }

    var due: Timestamp
    /// The clock when the timer was set. A timer set late (due before the clock) fires when the
    /// clock next moves, so one engine fires it when its clock first passes the later of the two.
    var setAt: Timestamp
    /// Scheduling order: two timers due at one instant fire in the order they were scheduled.
    var order: UInt64
    var kind: Kind
    var slot: Int32
    var device: Int32
    /// A proximity pair's other device; -1 for every other timer. Here, it takes the padding
    /// after `device`, so a timer is no larger.
    var other: Int32 = -1
    var token: UInt64

    /// By due time; at one instant the forced exits last (SPEC §12: other timers of that instant
    /// fire first), then by scheduling order.
    static func < (lhs: EngineTimer, rhs: EngineTimer) -> Bool {
        if lhs.due != rhs.due { return lhs.due < rhs.due }
        if lhs.kind.isLast != rhs.kind.isLast { return rhs.kind.isLast }
        return lhs.order < rhs.order
    }

    static func == (lhs: EngineTimer, rhs: EngineTimer) -> Bool {
        lhs.due == rhs.due && lhs.order == rhs.order
    }
}

/// Timers in due-time order (swift-collections' `Heap`). Cancelled timers stay in the heap and
/// are recognised by their token when they come out, which keeps cancelling O(1).
struct TimerQueue {
    private var heap = Heap<EngineTimer>()
    private var nextOrder: UInt64 = 0

    mutating func schedule(
        _ kind: EngineTimer.Kind, due: Timestamp, setAt: Timestamp?, slot: Int32, device: Int32, other: Int32 = -1,
        token: UInt64
    ) {
        nextOrder += 1
        heap.insert(
            EngineTimer(
                due: due, setAt: setAt ?? due, order: nextOrder, kind: kind, slot: slot, device: device, other: other,
                token: token))
    }

    /// Removes and returns the earliest timer if it is due before `limit` (or at it, when `inclusive`).
    /// When the next timer is due, if any is.
    var nextDue: Timestamp? { heap.min?.due }

    mutating func popDue(before limit: Timestamp, inclusive: Bool) -> EngineTimer? {
        guard let first = heap.min else { return nil }
        guard first.due < limit || (inclusive && first.due == limit) else { return nil }
        return heap.removeMin()
    }

    var count: Int { heap.count }

    /// Gives every timer's devices the numbers `newID` maps them to (the engine's devices were
    /// renumbered), dropping the timers of devices dropped: those were forgotten, so their
    /// timers were void already. The heap is rebuilt to the size it needs.
    mutating func renumber(_ newID: [Int32]) {
        var kept: [EngineTimer] = []
        for var timer in heap.unordered {
            if timer.device >= 0 {
                timer.device = newID[Int(timer.device)]
                if timer.device < 0 { continue }
            }
            if timer.other >= 0 {
                timer.other = newID[Int(timer.other)]
                if timer.other < 0 { continue }
            }
            kept.append(timer)
        }
        heap = Heap(kept)
    }
}

extension TimerQueue {
    /// The timers waiting, in firing order, and the next scheduling number: a checkpoint's share.
    var checkpointState: (timers: [EngineTimer], nextOrder: UInt64) {
        (heap.unordered.sorted(), nextOrder)
    }

    /// A queue holding `timers`, numbering the next one after `nextOrder`.
    init(restoring timers: [EngineTimer], nextOrder: UInt64) {
        heap = Heap(timers)
        self.nextOrder = nextOrder
    }
}
