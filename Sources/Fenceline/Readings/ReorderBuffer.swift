import HeapModule

/// Holds readings for a time window and lets them out in time order (stable for equal times): the
/// `--reorder-window` of SPEC §4, shared by the engine and by the sharded pipeline, which reorders
/// once before routing readings to its shards.
public struct ReorderBuffer {
    /// How long a reading is held: it leaves once the newest time seen minus `window` reaches it.
    public let window: TimeSpan
    private var heap = Heap<Held>()
    private var arrivals: UInt64 = 0
    /// The largest time seen so far.
    public private(set) var newestSeen: Timestamp?

    private struct Held: Comparable {
        var time: Timestamp
        var arrival: UInt64
        var reading: Reading
        /// How far ahead of the largest time seen before it the reading was stamped when it
        /// arrived (`nil` for the first), for a request's `maxFuture` (SPEC §12: measured on
        /// arrival, not against the clock lagging behind the window).
        var lead: TimeSpan?

        static func < (lhs: Held, rhs: Held) -> Bool { (lhs.time, lhs.arrival) < (rhs.time, rhs.arrival) }
        static func == (lhs: Held, rhs: Held) -> Bool { lhs.time == rhs.time && lhs.arrival == rhs.arrival }
    }

    /// Creates an empty buffer.
    public init(window: TimeSpan) {
        self.window = window
    }

    /// Whether nothing is held.
    public var isEmpty: Bool { heap.isEmpty }

    /// A reading let out, with how far ahead of the largest time seen before it it was stamped
    /// when it arrived (`nil` for the first reading, or one a checkpoint before format 5 held).
    public struct Released {
        public var reading: Reading
        public var lead: TimeSpan?
    }

    /// Holds `reading` (stamped `time`) and returns, in time order, the readings whose time has come.
    public mutating func add(_ reading: Reading, at time: Timestamp) -> [Released] {
        arrivals += 1
        let lead = newestSeen.map { TimeSpan(microseconds: time.microseconds - $0.microseconds) }
        heap.insert(Held(time: time, arrival: arrivals, reading: reading, lead: lead))
        return observe(time)
    }

    /// Notes that time has reached `time` (a live clock) and returns the readings now due.
    public mutating func observe(_ time: Timestamp) -> [Released] {
        newestSeen = max(newestSeen ?? time, time)
        return release(through: newestSeen!.advanced(by: TimeSpan(microseconds: -window.microseconds)))
    }

    /// Returns, in time order, the held readings stamped at or before `limit` (all for `nil`).
    public mutating func release(through limit: Timestamp?) -> [Released] {
        var released: [Released] = []
        while let first = heap.min, limit.map({ first.time <= $0 }) ?? true {
            let held = heap.removeMin()
            released.append(Released(reading: held.reading, lead: held.lead))
        }
        return released
    }
}

extension ReorderBuffer {
    /// A held reading as a checkpoint keeps it.
    typealias HeldEntry = (time: Timestamp, arrival: UInt64, reading: Reading, lead: TimeSpan?)

    /// The readings held, in release order, with their arrival numbers, the last arrival number
    /// and the newest time seen: a checkpoint's share.
    var checkpointState: (held: [HeldEntry], arrivals: UInt64) {
        (heap.unordered.sorted().map { ($0.time, $0.arrival, $0.reading, $0.lead) }, arrivals)
    }

    /// A buffer of `window` holding `held`.
    init(
        window: TimeSpan, restoring held: [HeldEntry], arrivals: UInt64, newestSeen: Timestamp?
    ) {
        self.init(window: window)
        heap = Heap(held.map { Held(time: $0.time, arrival: $0.arrival, reading: $0.reading, lead: $0.lead) })
        self.arrivals = arrivals
        self.newestSeen = newestSeen
    }
}
