import Dispatch
import Fenceline
import FencelineFormats
import Logging
import Synchronization

/// `--threads N`: the readings of each batch are parsed in parallel, routed by device to a few
/// engines per thread (devices never share state), applied in parallel (each thread taking the
/// next engine as it comes free), and the engines' events are merged back into exactly the order
/// one engine would have written them.
///
/// One engine releases an event after the first line, at or after the line that produced it, whose
/// clock passes the event's time; a timer fires (and its events leave) at the first line whose
/// clock passes its due time, or the clock when it was set if that is later. The coordinator keeps
/// the global clock per line, so it knows every event's release line, and sorting by (release
/// line, time, SPEC §4 order, production order) reproduces the single-engine stream byte for byte.
/// Before a shard applies a line its engine is moved to the global clock (by a tick, unless the line
/// is stamped with that clock and so moves it itself), so its devices' timers have fired exactly as
/// in one engine. Every shard keeps the timers of time and calendar requests and delivers the
/// notifications of its own devices (unscoped ones in shard 0; see `Engine.timingOwnership`);
/// control records go to every shard; each batch ends with a tick to the global clock so
/// every shard fires the timers one engine would have fired by then.
///
/// The coordinator is confined to the thread that runs the pipeline; its properties are
/// `@exclusivity(unchecked)` for the same reason as the engine's.
final class ShardedRun {
    /// One engine and its work for the current batch; used by one thread at a time, handed over at
    /// the batch barriers of `concurrentPerform` (so its properties need no dynamic exclusivity
    /// checks, which showed in profiles of the routing loop).
    final class Shard: @unchecked Sendable {
        /// What a shard applies, in order, with the line it came from: a reading of the current
        /// batch's parsed lines (an ``ShardedRun/itemIndex(part:position:compact:)``, so the
        /// coordinator copies nothing), or, when `index` is negative, the record at `-1 - index` in
        /// `records` (ticks, controls, readings that went through the reorder window or came from
        /// CSV, GPX or NMEA). Two words: the coordinator writes one per line and the shard reads it
        /// back, so a reading held inline (112 bytes) cost cache misses on both sides.
        struct Work {
            let line: Int
            let index: Int
        }

        @exclusivity(unchecked) var engine: Engine
        @exclusivity(unchecked) var inbox: [Work] = []
        @exclusivity(unchecked) var records: [Reading] = []
        @exclusivity(unchecked) var outbox: [(event: ProducedEvent, line: Int, order: Int)] = []
        @exclusivity(unchecked) var produced = 0
        /// After ``resolve(shard:against:final:)``: the outbox's events whose release line is
        /// known, sorted, and the positions of those still waiting.
        @exclusivity(unchecked) var keys: [ReleaseKey] = []
        @exclusivity(unchecked) var waiting: [Int] = []
        /// The global clock this shard's engine has been moved to.
        @exclusivity(unchecked) var synced: Timestamp?
        /// Keeps the next object's fields off this one's cache lines: two threads write two
        /// shards' counters at once (see ``CacheLinePadding``).
        private let padding = CacheLinePadding()

        /// How many work items ahead a shard asks for a parsed fix.
        static let lookahead = 8

        init(engine: Engine) {
            self.engine = engine
        }

        /// Queues a record of the shard's own from `line`.
        func append(_ reading: Reading, line: Int) {
            records.append(reading)
            inbox.append(Work(line: line, index: -records.count))
        }

        /// Works out the release line of each event in the outbox (this is shard `index`): the
        /// known ones' keys go to `keys`, sorted, the others' positions to `waiting`.
        func resolve(shard index: Int, against history: ClockHistory, final: Bool) {
            keys.removeAll(keepingCapacity: true)
            waiting.removeAll(keepingCapacity: true)
            for (position, item) in outbox.enumerated() {
                guard let release = history.release(of: item.event, line: item.line, final: final) else {
                    waiting.append(position)
                    continue
                }
                keys.append(
                    ReleaseKey(item.event.event, release: release, order: (index, item.order), at: index, position))
            }
            outbox.withUnsafeBufferPointer { outbox in
                keys.sort { a, b in ReleaseKey.precedes(a, b) { outbox[$0.position].event.event } }
            }
        }

        /// Applies the inbox; `parts` are the batch's parsed lines, which item indices point into
        /// (see ``ShardedRun/itemIndex(part:position:compact:)``).
        func run(tick: Timestamp?, parts: UnsafeBufferPointer<PartView>) {
            outbox.removeAll(keepingCapacity: true)
            for (next, work) in inbox.enumerated() {
                // The parsed fix a few items on, written by a parse worker long before (often on
                // the other core): asked for now, it is in cache when its turn comes.
                if next + Self.lookahead < inbox.count {
                    let ahead = inbox[next + Self.lookahead].index
                    if ahead >= 0 {
                        let (partIndex, position, compact) = ShardedRun.itemLocation(ahead)
                        if compact {
                            prefetch(parts[partIndex].fixes + position, byteCount: MemoryLayout<CompactFix>.size)
                        }
                    }
                }
                let events: [ProducedEvent]
                if work.index < 0 {
                    events = engine.produce(records[-1 - work.index])
                } else {
                    let (partIndex, position, compact) = ShardedRun.itemLocation(work.index)
                    let part = parts[partIndex]
                    if compact {
                        // A canonical fix: its fields alone, without reading the line's item.
                        events = part.fixes[position].produce(on: engine, in: part.longNames)
                    } else if case .reading(let reading) = part.items[position] {
                        events = engine.produce(reading)
                    } else {
                        // Only fixes and sightings are routed as items, canonical fixes marked compact.
                        assertionFailure("routed a line that holds no reading")
                        continue
                    }
                }
                for event in events {
                    produced += 1
                    outbox.append((event, work.line, produced))
                }
            }
            inbox.removeAll(keepingCapacity: true)
            records.removeAll(keepingCapacity: true)
            if let tick, synced.map({ $0 < tick }) ?? true {
                synced = tick
                for event in engine.produce(.control(ControlRecord(clockOnly: tick))) {
                    produced += 1
                    outbox.append((event, Int.max, produced))
                }
            }
        }
    }

    let shards: [Shard]
    /// The threads that run them (`--threads`).
    let threads: Int
    @exclusivity(unchecked) private var clockLines: [Int] = []  // the line at which the global clock took each value
    @exclusivity(unchecked) private var clockValues: [Timestamp] = []
    /// The lines of `tick` records: each closes the instant at the clock, releasing the events
    /// produced before it as one engine does (those of later lines wait for the next).
    @exclusivity(unchecked) private var closeLines: [Int] = []
    @exclusivity(unchecked) private var closeClocks: [Timestamp] = []
    @exclusivity(unchecked) private(set) var clock: Timestamp?
    @exclusivity(unchecked) private var line = 0
    @exclusivity(unchecked) private var started = false
    @exclusivity(unchecked) private var untimed: [Reading] = []
    /// Produced events not yet written, with the line that produced them.
    @exclusivity(unchecked) private var pending: [(event: ProducedEvent, line: Int, order: (shard: Int, order: Int))] =
        []

    /// Shard 0 gets the catalog; the others are forked from it once it has added the catalog at
    /// the first line's time, so the fences are prepared once for all (and the flat arrays every
    /// fix reads are shared until an engine changes them; see `Engine.fork()`).
    init(catalog: Catalog, configuration: Engine.Configuration, shards count: Int, threads: Int, logger: Logger) throws
    {
        self.threads = threads
        var configuration = configuration
        configuration.reorderWindow = .zero
        configuration.eventRelease = .asProduced
        let first = try Engine(catalog: catalog, configuration: configuration, logger: logger)
        shards = (0..<count).map { _ in Shard(engine: first) }
    }

    /// A device's shard, from the high bits of its ``DeviceHash`` (the engine's table uses the low
    /// ones): the same on every run, where Swift's own hashing is seeded.
    @inline(__always)
    static func shard(of device: String, count: Int) -> Int {
        shard(ofHash: DeviceHash.of(device), count: count)
    }

    /// The shard of the device whose ``DeviceHash`` is `hash`.
    @inline(__always)
    static func shard(ofHash hash: Int, count: Int) -> Int {
        Int(truncatingIfNeeded: UInt64(UInt(bitPattern: hash)).multipliedFullWidth(by: UInt64(count)).high)
    }

    /// Routes one reading (after any reordering), in input order.
    func route(_ reading: Reading) {
        guard let time = reading.time ?? clock else {
            untimed.append(reading)  // no clock yet: applied once the first timed line sets it
            return
        }
        var reading = reading
        if case .control(var control) = reading, control.time.map({ $0 < time }) ?? true {
            // Applied at the global clock, which a shard's own clock may lag.
            control.time = max(time, clock ?? time)
            reading = .control(control)
        }
        start(at: time)
        noteClock(time)
        deliver(reading)
    }

    /// The index of the parsed line at `position` of parse part `part`, for ``routeItems(part:of:from:)``;
    /// `compact`: the line is a canonical fix, read from the part's `fixes` alone.
    @inline(__always)
    static func itemIndex(part: Int, position: Int, compact: Bool) -> Int {
        (compact ? 1 << 62 : 0) | part << 32 | position
    }

    /// The parse part, position and compactness of an ``itemIndex(part:position:compact:)``.
    @inline(__always)
    static func itemLocation(_ index: Int) -> (part: Int, position: Int, compact: Bool) {
        ((index >> 32) & 0x3FFF_FFFF, index & 0xFFFF_FFFF, index & (1 << 62) != 0)
    }

    /// Routes the parsed fixes and sightings of parse part `part` (`parsed`) from `position` on, in
    /// order, stopping before the first line that is neither (or at the part's end); returns the
    /// position it stopped at. Each goes to its device's shard by index (the reading itself is not
    /// copied), with the time and shard the parallel parse worked out. One call per run of such
    /// lines (the usual: a whole part) keeps the per-line work to the routing itself, without a
    /// call, a check of the pipeline's flags and a shard reference counted per line.
    func routeItems(part: Int, of parsed: ParsedPart, from position: Int) -> Int {
        var position = position
        let lines = parsed.lines
        shards.withUnsafeBufferPointer { shards in
            while position < parsed.count {
                let item = lines[position]
                guard item.shard >= 0 else { return }
                let time = Timestamp(microseconds: item.time)
                if !started { start(at: time) }
                noteClock(time)
                line += 1
                let target = shards[Int(item.shard)]
                sync(target, arriving: time)
                target.inbox.append(
                    Shard.Work(
                        line: line, index: Self.itemIndex(part: part, position: position, compact: item.compact)))
                position += 1
            }
        }
        return position
    }

    /// The wall and CPU seconds the first shard took to add the catalog, for `--timings`: each
    /// measured as itself, since on a busy machine the wall time is more than the CPU time.
    private(set) var catalogTook = (wall: 0.0, cpu: 0.0)

    /// At the first timed line, shard 0 adds the catalog at its time, as one engine would, and the
    /// others start as forks of it; records that came before any time are applied then.
    private func start(at time: Timestamp) {
        if !started {
            started = true
            let begin = RunMark.now(readings: 0)
            defer {
                let end = RunMark.now(readings: 0)
                catalogTook = (end.wall - begin.wall, end.cpu - begin.cpu)
            }
            let first = shards[0]
            for event in first.engine.produce(.control(ControlRecord(clockOnly: time))) {
                first.produced += 1
                pending.append((event, line, (0, first.produced)))
            }
            let count = shards.count
            for (index, shard) in shards.enumerated() {
                if shard !== first { shard.engine = first.engine.fork() }
                shard.engine.timingOwnership = ({ Self.shard(of: $0, count: count) == index }, index == 0)
                shard.synced = time
            }
            let waiting = untimed
            untimed = []
            for record in waiting { deliver(record) }
        }
    }

    /// Notes that the line just routed, a `tick` record, closes the instant at the clock.
    func closeInstant() {
        guard let clock else { return }
        closeLines.append(line)
        closeClocks.append(clock)
    }

    private func noteClock(_ time: Timestamp) {
        if clock.map({ time > $0 }) ?? true {
            clock = time
            clockLines.append(line)
            clockValues.append(time)
        }
    }

    private func deliver(_ reading: Reading) {
        line += 1
        switch reading {
        case .fix(let fix):
            deliver(reading, to: shards[Self.shard(of: fix.device, count: shards.count)])
        case .sighting(let sighting):
            deliver(reading, to: shards[Self.shard(of: sighting.device, count: shards.count)])
        case .control:
            // Every shard takes every control record; a time or calendar request notifies each
            // device in its own shard.
            for shard in shards { deliver(reading, to: shard) }
        }
    }

    /// Hands a line to a shard, first moving the shard's clock to the global one: one engine has
    /// fired every timer due before that clock by now, and a reading older than the clock (but not
    /// stale) must find its device's timers in that same state.
    private func deliver(_ reading: Reading, to shard: Shard) {
        sync(shard, arriving: reading.time)
        shard.append(reading, line: line)
    }

    /// Moves a shard that lags the global clock there before it applies a line stamped `time`. A
    /// line stamped with the clock itself (the usual case: the line that moved it) moves the
    /// shard's engine there as it is applied, firing the same timers first, so it needs no tick
    /// (the clock moves on about two lines in three of the benchmark streams, and each such line
    /// had cost its shard a tick record besides the reading).
    private func sync(_ shard: Shard, arriving time: Timestamp?) {
        guard let clock, shard.synced.map({ $0 < clock }) ?? true else { return }
        shard.synced = clock
        if time != clock {
            shard.append(.control(ControlRecord(clockOnly: clock)), line: line)
        }
    }

    /// Drops the clock's history but its last value, at the end of a batch: a later lookup never
    /// needs an older line. A timer of a later batch falls due at or after that value (one due
    /// before it fired in this batch's closing tick), and an event of a later batch is released
    /// at its own line or later, which `max(line, after)` gives whichever older line the lookup
    /// would have found. Kept whole, the history grew by a line for each of most readings, and
    /// its growth (copies and fresh pages) was serial work of every batch.
    private func forgetClockLines() {
        // An event still waiting was produced after every close so far (one before it would
        // have released it), so none of them matters again.
        closeLines.removeAll(keepingCapacity: true)
        closeClocks.removeAll(keepingCapacity: true)
        guard clockLines.count > 1 else { return }
        clockLines.removeFirst(clockLines.count - 1)
        clockValues.removeFirst(clockValues.count - 1)
    }

    /// The global clock's values so far and the lines at which it took them, as the shards
    /// read them while they work out their events' release lines.
    struct ClockHistory: Sendable {
        let lines: [Int]
        let values: [Timestamp]
        /// The lines of the `tick` records routed (``closeInstant()``), in order, and the clock at each.
        var closes: [Int] = []
        var closeClocks: [Timestamp] = []

        /// The first line whose clock is later than `time`, `nil` if none yet.
        func firstLine(after time: Timestamp) -> Int? {
            var low = 0
            var high = values.count
            while low < high {
                let middle = (low + high) / 2
                if values[middle] > time { high = middle } else { low = middle + 1 }
            }
            return low < values.count ? lines[low] : nil
        }

        /// Where one engine writes `event`, produced at `line`, as a key that orders the writes:
        /// twice the first line whose clock passes the event's time, or its timer's bound (one
        /// engine fires a timer at the first line whose clock passes that), and not before
        /// `line`; or, if sooner, just before twice the line of a `tick` after it, which one
        /// engine writes after the lines before it and before the clock moves on. `nil` while
        /// neither is known; at the end (`final`), the last instant.
        func release(of event: ProducedEvent, line: Int, final: Bool) -> Int? {
            // The first tick at or after the line that produced it closes its instant, if the
            // clock has not passed its time by then; a timer's, the first whose clock reaches
            // its bound (a tick fires the timers due at the clock).
            var low = 0
            var high = closes.count
            while low < high {
                let middle = (low + high) / 2
                if closes[middle] >= line { high = middle } else { low = middle + 1 }
            }
            let passed: Int?
            var closed: Int?
            if let bound = event.timerBound {
                passed = firstLine(after: bound).map { 2 * $0 }
                while low < closes.count && closeClocks[low] < bound { low += 1 }
            } else {
                passed = firstLine(after: event.event.time).map { 2 * max(line, $0) }
            }
            if low < closes.count { closed = 2 * closes[low] - 1 }
            switch (passed, closed) {
            case (let passed?, let closed?): return min(passed, closed)
            case (let passed?, nil): return passed
            case (nil, let closed?): return closed
            case (nil, nil): return final ? Int.max : nil
            }
        }
    }

    /// Applies the routed readings in parallel and returns the events whose release line is known,
    /// in the order one engine would have written them.
    ///
    /// `otherWork`: other work (the next block's parse), `count` items of it run by the same threads
    /// as they come free from the shards, so it fills the time one waits for the other.
    func runBatch(
        final: Bool, until: Timestamp?, parts: UnsafeBufferPointer<PartView> = .init(start: nil, count: 0),
        otherWork: (count: Int, work: @Sendable (Int) -> Void)? = nil
    ) -> [Event] {
        let tick = final ? nil : clock
        let shards = self.shards
        let batch = BatchItems(parts: parts)
        // Events still waiting from earlier batches, then the shards' sorted runs, merged by the
        // sort; the events stay where they are (a few hundred bytes each, with counted references)
        // until they are gathered once in order. Those still waiting for a later line stay.
        var ready: [ReleaseKey] = []
        var kept: [(event: ProducedEvent, line: Int, order: (shard: Int, order: Int))] = []
        do {
            // The batch is routed: its clock history is complete, and each shard works out its own
            // events' release lines and sorts them while the others still run.
            let history = ClockHistory(
                lines: clockLines, values: clockValues, closes: closeLines, closeClocks: closeClocks)
            Self.perform(shards.count + (otherWork?.count ?? 0), threads: threads) { index in
                guard index < shards.count else { return otherWork!.work(index - shards.count) }
                shards[index].run(tick: tick, parts: batch.parts)
                if !final { shards[index].resolve(shard: index, against: history, final: false) }
            }
            if final {
                let end = [clock, until].compactMap { $0 }.max()
                Self.perform(shards.count, threads: threads) { index in
                    let shard = shards[index]
                    for event in shard.engine.produceFinishing(until: end) {
                        shard.produced += 1
                        shard.outbox.append((event, Int.max, shard.produced))
                    }
                    shard.resolve(shard: index, against: history, final: true)
                }
            }
            for (position, item) in pending.enumerated() {
                if let release = history.release(of: item.event, line: item.line, final: final) {
                    ready.append(ReleaseKey(item.event.event, release: release, order: item.order, at: -1, position))
                } else {
                    kept.append(item)
                }
            }
        }
        // After the last lookup: a history kept alive past it would make this copy the arrays.
        forgetClockLines()
        for shard in shards { ready += shard.keys }
        let events = gather(&ready)
        for (index, shard) in shards.enumerated() {
            for position in shard.waiting {
                let item = shard.outbox[position]
                kept.append((item.event, item.line, (index, item.order)))
            }
            shard.outbox.removeAll(keepingCapacity: true)
        }
        pending = kept
        return events
    }

    /// Runs `work` for every index below `count` on `threads` threads (this one among them), each
    /// taking the next index as it comes free. `concurrentPerform` alone would run up to one
    /// thread per core for that many iterations, more than `--threads` asked for.
    static func perform(_ count: Int, threads: Int, _ work: @Sendable (Int) -> Void) {
        let next = WorkCounter()
        DispatchQueue.concurrentPerform(iterations: min(threads, count)) { _ in
            while true {
                let index = next.value.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < count else { return }
                work(index)
            }
        }
    }

    /// Sorts `keys` (each shard's already sorted: the sort merges their runs) and returns their
    /// events in that order. The outboxes are borrowed only here, so that emptying them after
    /// keeps their storage.
    private func gather(_ keys: inout [ReleaseKey]) -> [Event] {
        let boxes = shards.map(\.outbox)
        return pending.withUnsafeBufferPointer { pending in
            func produced(_ key: ReleaseKey) -> ProducedEvent {
                key.source < 0 ? pending[key.position].event : boxes[key.source][key.position].event
            }
            func event(_ key: ReleaseKey) -> Event { produced(key).event }
            keys.sort { ReleaseKey.precedes($0, $1, event: event) }
            gatheredSources = keys.map { (key: ReleaseKey) in (shard: key.order.shard, order: produced(key).order) }
            return keys.map(event)
        }
    }

    /// For each event the last ``runBatch(final:until:parts:otherWork:)`` returned, the shard that
    /// produced it and its production order there, for ``numberDelivered(_:)``.
    private var gatheredSources: [(shard: Int, order: Int)] = []

    /// Tells each shard's engine the `seq` its events of the last batch got (`events` as numbered),
    /// so that its delivered ledger can answer a response that names one.
    func numberDelivered(_ events: [Event]) {
        guard events.count == gatheredSources.count, !events.isEmpty else { return }
        var perShard = [(orders: [Int], events: [Event])](repeating: ([], []), count: shards.count)
        for (event, source) in zip(events, gatheredSources) {
            perShard[source.shard].orders.append(source.order)
            perShard[source.shard].events.append(event)
        }
        for (index, share) in perShard.enumerated() where !share.events.isEmpty {
            shards[index].engine.numberDelivered(orders: share.orders, events: share.events)
        }
    }

    /// A waiting event's place in the release order: its release line, then what
    /// ``Event/releasePrecedes(_:_:)`` compares first, then production order; the event itself is
    /// at `position` of `pending` (`source` -1) or of shard `source`'s outbox.
    struct ReleaseKey {
        var release: Int
        var time: Timestamp
        var rank: Int
        var order: (shard: Int, order: Int)
        var source: Int
        var position: Int

        init(_ event: Event, release: Int, order: (shard: Int, order: Int), at source: Int, _ position: Int) {
            self.release = release
            time = event.time
            rank = event.kind.rank
            self.order = order
            self.source = source
            self.position = position
        }

        /// Whether `a` leaves before `b`; `event` finds a key's event, read only for ties.
        static func precedes(_ a: ReleaseKey, _ b: ReleaseKey, event: (ReleaseKey) -> Event) -> Bool {
            if a.release != b.release { return a.release < b.release }
            if a.time != b.time { return a.time < b.time }
            if a.rank != b.rank { return a.rank < b.rank }
            return Event.releasePrecedes(event(a), event(b)) ?? (a.order < b.order)
        }
    }

    /// Stale readings over all shards.
    var stale: Int { shards.reduce(0) { $0 + $1.engine.statistics.stale } }
    var filtered: Int { shards.reduce(0) { $0 + $1.engine.statistics.filtered } }
}

@available(*, unavailable)
extension ShardedRun: Sendable {}

/// The batch's parsed lines, read (never written) by every shard during its phase.
private struct BatchItems: @unchecked Sendable {
    let parts: UnsafeBufferPointer<ShardedRun.PartView>
}

/// The next work item for ``ShardedRun/perform(_:threads:_:)``'s threads.
private final class WorkCounter: Sendable {
    let value = Atomic<Int>(0)
}
