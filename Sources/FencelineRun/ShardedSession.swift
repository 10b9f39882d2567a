public import Fenceline
import FencelineFormats
public import Logging

/// A session that spreads the devices over several engines on several threads (`--threads`):
/// readings are routed by device, applied in batches in parallel, and the events merged into
/// exactly the order one engine gives them (see ``ShardedRun``), numbered the same.
///
/// Events come out a batch at a time: ``process(_:)`` returns those of a batch when it runs (every
/// 32 Ki readings), ``advance(to:)`` and ``finish(until:keepingHeldReadings:)`` run one at once.
public final class ShardedSession: RunSession, DrivenSession {
    /// ``checkpoint()`` of a sharded session: its devices are in several engines, whose states do
    /// not merge into one checkpoint. A run that checkpoints uses one engine (the events are the same).
    public struct CheckpointUnavailable: Error, CustomStringConvertible {
        public var description: String { "a sharded session cannot be checkpointed; run one engine" }
    }

    let coordinator: ShardedRun
    private let threads: Int
    private let pieces: Int
    /// The reorder window is kept here, before routing, so the shards' engines see readings in order.
    @exclusivity(unchecked) private var reorder: ReorderBuffer?
    /// The last `seq` given.
    @exclusivity(unchecked) private var sequence = 0
    /// Readings routed since the last batch ran.
    @exclusivity(unchecked) private var routed = 0
    /// The parse workers' shares of a block, kept from block to block: two sets, one being parsed
    /// while the shards apply the other.
    private let partSets: [[ShardedRun.ParsedPart]]
    @exclusivity(unchecked) private var nextSet = 0
    /// A block routed but not applied yet: its set of parts, and its mark (see `batchDone`).
    @exclusivity(unchecked) private var unapplied: (parts: [ShardedRun.ParsedPart], mark: RunMark?)?

    /// A session over `catalog` with `threads` threads and four engines per thread (at most 16 in
    /// all, or one per thread beyond that), so a thread that runs slower takes fewer.
    /// - Throws: ``CatalogError`` listing every invalid request.
    public convenience init(
        catalog: Catalog, configuration: Engine.Configuration = Engine.Configuration(), threads: Int,
        logger: Logger = Logger(label: "fenceline.engine", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        try self.init(
            catalog: catalog, configuration: configuration, threads: threads, piecesPerThread: 4, logger: logger)
    }

    init(
        catalog: Catalog, configuration: Engine.Configuration, threads: Int, piecesPerThread: Int, logger: Logger
    ) throws {
        let threads = max(1, threads)
        self.threads = threads
        pieces = max(threads, min(threads * max(1, piecesPerThread), 16))
        coordinator = try ShardedRun(
            catalog: catalog, configuration: configuration, shards: pieces, threads: threads, logger: logger)
        reorder = configuration.reorderWindow > .zero ? ReorderBuffer(window: configuration.reorderWindow) : nil
        partSets = (0..<2).map { [pieces] _ in (0..<pieces).map { _ in ShardedRun.ParsedPart() } }
    }

    public func process(_ reading: Reading) -> [Event] {
        route(reading)
        return takeEarly() + (routed >= 0x8000 ? runBatch() : [])
    }

    /// Moves every engine's clock to `time` and returns the events released by then (those at
    /// `time` itself come with the next batch).
    public func advance(to time: Timestamp) -> [Event] {
        // Its own tick moves the clocks only: it is not a `tick` record of the input, which
        // closes the instant at the clock (and may wait in the reorder window past this call).
        route(.control(ControlRecord(clockOnly: time)))
        return takeEarly() + runBatch()
    }

    public func finish(until: Timestamp?, keepingHeldReadings: Bool) -> [Event] {
        if !keepingHeldReadings, let held = reorder?.release(through: nil) {
            for due in held { deliver(due.reading) }
        }
        routed = 0
        return takeEarly() + numbered(coordinator.runBatch(final: true, until: until))
    }

    public func checkpoint() throws -> [UInt8] {
        throw CheckpointUnavailable()
    }

    public var staleReadings: Int { coordinator.stale }
    public var filteredReadings: Int { coordinator.filtered }

    /// The global clock: the latest time applied.
    public var clock: Timestamp? { coordinator.clock }

    /// Routes a reading through the reorder window, if any.
    private func route(_ reading: Reading) {
        routed += 1
        if reorder != nil, let time = reading.time {
            // A shard measures a request's maxFuture against its own clock (README), not the lead.
            for due in reorder!.add(reading, at: time) { deliver(due.reading) }
        } else {
            deliver(reading)
        }
    }

    /// Hands a reading to the coordinator; a `respond` record goes through ``respond(_:)``.
    private func deliver(_ reading: Reading) {
        if case .control(let control) = reading, case .respond(let response) = control.operation {
            respond(reading, response)
        } else {
            coordinator.route(reading)
            if case .control(let control) = reading, case .tick = control.operation, !control.movesClockOnly {
                coordinator.closeInstant()
            }
        }
    }

    // MARK: Responses

    /// Events released by a response's batches (see ``respond(_:_:)``) not handed out yet, for a
    /// caller without a ``RunOutput``.
    @exclusivity(unchecked) private var early: [Event] = []
    /// The run's output while a driven call routes, so a response's batches are written at once.
    @exclusivity(unchecked) private var activeOutput: RunOutput?
    /// The parsed parts of the block being routed, which routed items point into.
    @exclusivity(unchecked) private var activeParts: [ShardedRun.ParsedPart]?
    /// `respond` lines read whose outcome is not known yet, with their line numbers.
    @exclusivity(unchecked) private var unansweredResponses: [(response: NotificationResponse, line: Int)] = []

    private func takeEarly() -> [Event] {
        guard !early.isEmpty else { return [] }
        defer { early = [] }
        return early
    }

    /// A `respond` record, which names a notification by the `seq` only the merge knows: what is
    /// routed so far runs as a batch, with the clock moved to the record's time and a tick there
    /// (so the events of every instant up to it are numbered and their engines told), then the record goes to
    /// every shard (only the one holding the notification can take it) and runs as a batch of its
    /// own, whose outcome says whether it was refused. Responses are rare; the two batches keep
    /// the output exactly one engine's.
    private func respond(_ reading: Reading, _ response: NotificationResponse) {
        let refusal: ResponseRefusal?
        if reading.time == nil && coordinator.clock == nil {
            // Before the first clock nothing is delivered: refused at once, as one engine does.
            refusal = ResponseRefusal.nothingDelivered
        } else {
            if let time = reading.time { coordinator.route(.control(ControlRecord(clockOnly: time))) }
            // The record closes the instant at its time first, as one engine's does: a tick
            // there, so the merge numbers that instant's notifications before any is answered.
            coordinator.route(.control(ControlRecord(time: nil, operation: .tick)))
            coordinator.closeInstant()
            flushBatch()
            coordinator.route(reading)
            flushBatch()
            var outcomes: [Engine.ResponseOutcome] = []
            for shard in coordinator.shards { outcomes += shard.engine.takeResponseOutcomes() }
            if outcomes.contains(where: { $0.refusal == nil }) {
                refusal = nil
            } else {
                // Only the shard holding the notification can say more than "not delivered".
                let refusals = outcomes.compactMap(\.refusal)
                refusal = refusals.first { $0.code == .invalidAction } ?? refusals.first ?? .nothingDelivered
            }
        }
        guard let output = activeOutput,
            let index = unansweredResponses.firstIndex(where: { $0.response == response })
        else { return }
        let line = unansweredResponses.remove(at: index).line
        if let refusal {
            output.summary.readings -= 1  // counted as applied when it was read
            output.reject(LineError(field: refusal.field, message: refusal.message), line: line)
        }
    }

    /// Runs what is routed as a batch and writes its events (or keeps them for the next return).
    private func flushBatch() {
        routed = 0
        let views = activeParts?.map(\.view) ?? []
        let events = numbered(
            views.withUnsafeBufferPointer { coordinator.runBatch(final: false, until: nil, parts: $0) })
        if let output = activeOutput {
            output.emit(events, flush: !output.readsFile)
        } else {
            early += events
        }
    }

    /// Notes a `respond` line of a driven run, whose outcome ``respond(_:_:)`` reports.
    private func noteResponse(_ reading: Reading, line: Int, output: RunOutput) {
        guard case .control(let control) = reading, case .respond(let response) = control.operation else { return }
        activeOutput = output
        unansweredResponses.append((response, line))
    }

    private func runBatch() -> [Event] {
        routed = 0
        return numbered(coordinator.runBatch(final: false, until: nil))
    }

    /// Numbers a batch's events on from the last batch's (taking the array, so it is not copied),
    /// and tells the engines that produced them.
    private func numbered(_ events: consuming [Event]) -> [Event] {
        var events = events
        for index in events.indices {
            sequence += 1
            events[index].sequence = sequence
        }
        coordinator.numberDelivered(events)
        return events
    }

    // MARK: Driven by the run pipeline

    func apply(_ reading: Reading, output: RunOutput) {
        output.summary.readings += 1
        activeOutput = output
        defer { activeOutput = nil }
        route(reading)
        if routed >= 0x8000 { batchDone(runBatch(), output: output) }
    }

    func apply(line: UnsafeBufferPointer<UInt8>, number: Int, output: RunOutput) {
        if let parts = output.decoder.canonicalParts(line) { return apply(.fix(parts.fix(in: line)), output: output) }
        do throws(LineError) {
            if let reading = try output.decoder.decode(line, number: number, afterCanonical: true) {
                noteResponse(reading, line: number, output: output)
                apply(reading, output: output)
            }
        } catch {
            output.reject(error, line: number)
        }
    }

    func endInput(output: RunOutput) {
        if let last = unapplied {
            unapplied = nil
            apply(last, output: output)
        }
        if routed > 0 { output.emit(runBatch(), flush: !output.readsFile) }
    }

    /// ``advance(to:)`` with `output` at hand, so a `respond` record the reorder window releases
    /// on the way is written and reported as it goes.
    func advance(to time: Timestamp, output: RunOutput) -> [Event] {
        activeOutput = output
        defer { activeOutput = nil }
        return advance(to: time)
    }

    /// Runs the end of the input with `output` at hand, so a `respond` record that the reorder
    /// window held until now is written and reported as it is released.
    func finish(until: Timestamp?, keepingHeldReadings: Bool, output: RunOutput) -> [Event] {
        activeOutput = output
        defer { activeOutput = nil }
        return finish(until: until, keepingHeldReadings: keepingHeldReadings)
    }

    /// Writes a batch's events; the first batch with a reading (which added the catalog to the
    /// engines) marks the steady start: `mark`, taken before the batch was read, moved on by the
    /// time the catalog took, so the batch's own readings count (a block holds over a hundred
    /// thousand); without it, the end of the batch.
    private func batchDone(_ events: [Event], from mark: RunMark? = nil, output: RunOutput) {
        output.emit(events, flush: !output.readsFile)
        if output.steadyStart == nil && output.summary.readings > 0 {
            if var mark, coordinator.catalogTook.wall > 0 {
                mark.wall += coordinator.catalogTook.wall
                mark.cpu += coordinator.catalogTook.cpu
                output.steadyStart = mark
            } else {
                output.steadyStart = .now(readings: output.summary.readings)
            }
        }
        output.meter?.note(output.summary, always: true)
    }

    /// Applies a routed block and hands its events on, with `otherWork` (the next block's parse)
    /// run by the same threads.
    private func apply(
        _ batch: (parts: [ShardedRun.ParsedPart], mark: RunMark?), output: RunOutput,
        otherWork: (count: Int, work: @Sendable (Int) -> Void)? = nil
    ) {
        routed = 0
        let views = batch.parts.map(\.view)
        let events = views.withUnsafeBufferPointer {
            coordinator.runBatch(final: false, until: nil, parts: $0, otherWork: otherWork)
        }
        batchDone(numbered(events), from: batch.mark, output: output)
    }

    /// One block of whole lines: split into shares at line ends, each share split into lines and
    /// parsed in parallel, then routed in input order (bad lines, `--strict` and control records
    /// exactly as with one engine). Read from a file, the block is parsed while the shards apply
    /// the one before, and applied with the next; from a pipe, which may pause for any time, it is
    /// applied and its events written before the next is read.
    func apply(block: UnsafeBufferPointer<UInt8>, firstLine: Int, output: RunOutput) -> Int {
        // A CSV header is read first, in order, so that every worker knows the columns.
        var block = block
        var headerLines = 0
        while output.decoder.awaitsCSVHeader, output.keepsReading, !block.isEmpty {
            let line = block.line(at: 0)
            apply(
                line: UnsafeBufferPointer(rebasing: block[..<line.end]), number: firstLine + headerLines, output: output
            )
            headerLines += 1
            block = UnsafeBufferPointer(rebasing: block[line.next...])
        }
        guard !block.isEmpty else { return headerLines }
        let mark = output.steadyStart == nil ? RunMark.now(readings: output.summary.readings) : nil
        let parts = partSets[nextSet]
        nextSet ^= 1
        let work = ParseWork(
            block: block, parts: parts, shards: pieces, csv: output.decoder.csv, motion: reorder != nil)
        if let previous = unapplied {
            unapplied = nil
            apply(previous, output: output, otherWork: (pieces, { work.parse(part: $0) }))
        } else {
            ShardedRun.perform(pieces, threads: threads) { part in work.parse(part: part) }
        }
        var number = firstLine + headerLines
        activeOutput = output
        activeParts = parts
        defer {
            activeOutput = nil
            activeParts = nil
        }
        for (partIndex, part) in parts.enumerated() where output.keepsReading {
            var position = 0
            while position < part.count && output.keepsReading {
                if reorder == nil {
                    // Fixes and sightings in a run, routed by index; readings that must wait in
                    // the reorder window go through `route(_:)`.
                    let end = coordinator.routeItems(part: partIndex, of: part, from: position)
                    output.summary.readings += end - position
                    routed += end - position
                    number += end - position
                    position = end
                    guard position < part.count else { break }
                }
                defer {
                    number += 1
                    position += 1
                }
                do throws(LineError) {
                    switch part.item(at: position) {
                    case .blank: continue
                    case .compactFix: accepted(.fix(part.fixes[position].fix(in: part.longNames)), output: output)
                    case .reading(let reading): accepted(reading, output: output)
                    case .failure(let error): throw error
                    case .control:
                        let span = part.lines[position]
                        let line = UnsafeBufferPointer(rebasing: block[span.start..<span.end])
                        if let reading = try output.decoder.decode(line, number: number) {
                            noteResponse(reading, line: number, output: output)
                            accepted(reading, output: output)
                        }
                    }
                } catch {
                    output.reject(error, line: number)
                }
            }
        }
        if output.readsFile {
            unapplied = (parts, mark)
        } else {
            apply((parts, mark), output: output)
        }
        return headerLines + parts.reduce(0) { $0 + $1.count }
    }

    /// Counts and routes a reading of a block (applied with the block).
    private func accepted(_ reading: Reading, output: RunOutput) {
        output.summary.readings += 1
        route(reading)
    }
}

@available(*, unavailable)
extension ShardedSession: Sendable {}
