public import Fenceline
public import FencelineFormats
import Foundation
public import Logging

/// What drives the clock of a run (`--clock`).
public enum ClockMode: String, Hashable, Sendable, CaseIterable {
    /// Only the readings' own times (the default): the same input always gives the same output.
    case event
    /// The readings' times and the wall clock, for live feeds: a device that falls silent still
    /// gets its exit when its timer falls due.
    case wall
}

/// Reads readings from files or standard input, runs them through an ``Engine`` and writes the
/// events: the whole of `fenceline run`, with the I/O injected so tests and the scenario runner
/// can drive it in memory.
public final class RunPipeline {
    /// Settings of a run.
    public struct Options: Sendable {
        /// Forces the format of every input; `nil` decides per file by extension, then content.
        public var inputFormat: InputFormat?
        /// Stop at the first bad line (exit 65) instead of skipping it.
        public var strict = false
        /// Where the clock goes at the end of input (default: the last reading's time).
        public var until: Timestamp?
        /// Hold readings this long and release them in time order.
        public var reorderWindow = TimeSpan.zero
        /// How many bad lines are reported one by one before only counting.
        public var maximumReported = 20
        /// `.wall` also moves the clock with the wall clock, once a second (live input).
        public var clock = ClockMode.event
        /// Delivered notifications kept per device.
        public var deliveredLimit = 64
        /// Threads working in parallel, devices sharded across their engines (see
        /// `piecesPerThread`); the output is the same.
        public var threads = 1
        /// The device of GPX and NMEA readings (`--device`); by default a GPX track's name, else
        /// the file name.
        public var device: String?
        /// With `threads` > 1, the bytes of NDJSON read and parsed as one block (tests make it small).
        /// The threads wait for each other at the end of every block, so blocks are large; but the
        /// first block's parse and the last one's apply overlap nothing (each other block is
        /// parsed while the one before is applied), so not too large.
        var readBlockSize = 8 << 20
        /// With `threads` > 1, the engines (device shards) per thread, and the shares each block
        /// is parsed in per thread. The threads take shards and shares as they come free, so one
        /// that runs slower (this machine's two cores often differ by a third, for seconds at a
        /// time) takes fewer: with one shard and one share per thread, every block waited for the
        /// slower thread. At most 16 engines in all, or one per thread beyond that: the engines share
        /// the fences (see `Engine.fork()`), but each has state of its own per fence slot and per
        /// batch.
        var piecesPerThread = 4
        /// With one thread, the bytes of an NDJSON file read as one block, its lines parsed in one
        /// pass before the engine applies them in the next; `nil` reads and applies line by line,
        /// as standard input always is (tests compare the two).
        var serialBlockSize: Int? = 128 << 10

        /// Creates default options.
        public init() {}
    }

    /// What a run did.
    public struct Summary: Hashable, Sendable {
        /// Valid readings and control records read.
        public var readings = 0
        /// Bad lines skipped.
        public var skipped = 0
        /// Readings skipped as stale.
        public var stale = 0
        /// Events written.
        public var events = 0
        /// Under `--strict`, the bad line that stopped the run.
        public var strictFailure: InputError?

        /// The one-line summary for stderr.
        public var line: String {
            "fenceline: \(readings) readings, \(skipped) skipped, \(stale) stale, \(events) events"
        }
    }

    /// How far a run has got, for a progress display.
    public struct Progress: Hashable, Sendable {
        /// Valid readings and control records read so far.
        public var readings: Int
        /// Events written so far.
        public var events: Int
        /// Bytes read from the inputs so far (compressed bytes for gzip inputs).
        public var bytesRead: Int
        /// The inputs' total size, when every one is a regular file.
        public var totalBytes: Int?
    }

    let catalog: Catalog
    let catalogDecoder: CatalogDecoder
    let options: Options
    let encoder: any EventEncoder
    let logger: Logger
    /// Records one device and region request's steps (`fenceline explain`); single engine only.
    public var tracer: RegionTracer?
    /// The engine of the last run, for reading its notification state afterwards.
    public private(set) var lastEngine: Engine?
    /// The engines of the last `--threads` run, kept as long as the pipeline: a process that ends
    /// right after (and keeps the pipeline) does not spend time tearing them down.
    var lastShardedRun: ShardedRun?
    /// A checkpoint to start from instead of the catalog alone (`--resume`): the catalog's
    /// requests are then added to it, as `add` records would be, except those identical to a
    /// request it holds, which go on as they were (SPEC §10).
    public var resumeState: [UInt8]?
    /// Whether the run ends with a checkpoint (`--checkpoint`): the run ends as any run does, but
    /// readings held by the reorder window stay held, and ``lastCheckpoint`` holds the state.
    /// Such a run uses one engine whatever `threads` says.
    public var checkpointing = false
    /// Asked after each line when set: `true` stops reading there (SIGINT or SIGTERM under
    /// `--checkpoint`); the run then ends as if the input had ended.
    public var shouldStop: (() -> Bool)?
    /// The state the last run ended with, when ``checkpointing``.
    public private(set) var lastCheckpoint: [UInt8]?
    /// The moment the last run had applied its first reading (with `--threads`, its first batch):
    /// the catalog is added to the engine by then. `nil` when it read none.
    public internal(set) var steadyStart: RunMark?

    /// Creates a pipeline for a decoded catalog.
    public init(
        catalog: Catalog, catalogDecoder: CatalogDecoder, options: Options, encoder: any EventEncoder, logger: Logger
    ) {
        self.catalog = catalog
        self.catalogDecoder = catalogDecoder
        self.options = options
        self.encoder = encoder
        self.logger = logger
    }

    /// Runs over `inputs` in order (`-` is standard input), calling `write` with output bytes,
    /// `report` with each diagnostic line and `progress` every few thousand readings.
    /// - Throws: ``InputError`` when an input cannot be opened (nothing is read then), or
    ///   ``CatalogError`` when the catalog is invalid.
    public func run(
        inputs: [String], write: ([UInt8]) -> Void, report: (String) -> Void, progress: ((Progress) -> Void)? = nil
    ) throws -> Summary {
        let readers = try inputs.map { path throws(InputError) in try LineReader(path: path) }
        for reader in readers { reader.endsOnInterruption = shouldStop }
        let meter = progress.map { ProgressMeter(readers: readers, report: $0) }
        steadyStart = nil
        lastCheckpoint = nil
        // A checkpoint is one engine's state: a run that writes or resumes one uses one engine.
        if options.threads > 1 && !checkpointing && resumeState == nil {
            return try runSharded(readers, write: write, report: report, meter: meter)
        }
        let configuration = Engine.Configuration(
            reorderWindow: options.reorderWindow, deliveredLimit: options.deliveredLimit)
        let engine: Engine
        if let resumeState {
            engine = try Engine(resuming: resumeState, configuration: configuration, logger: logger)
            try engine.add(catalog, keepingIdenticalRequests: true)
        } else {
            engine = try Engine(catalog: catalog, configuration: configuration, logger: logger)
        }
        lastEngine = engine
        if let tracer { engine.trace(tracer) }
        let requests = NDJSONReadingDecoder.RequestContext(decoder: catalogDecoder, catalog: catalog)
        let run = SerialRun(
            engine: engine, encoder: encoder, meter: meter,
            badLines: BadLineCounter(maximumReported: options.maximumReported, strict: options.strict),
            shouldStop: shouldStop)
        for reader in readers {
            run.file = reader.name
            run.live = reader.name == "-" || options.clock == .wall
            let format = try InputFormat.of(reader, forced: options.inputFormat)
            if format == .gpx {
                // A whole document, read at once.
                let source = try ReadingSource(
                    reader: reader, format: format, device: options.device, requests: requests)
                try source.forEach { item in
                    switch item {
                    case .success(let reading): run.accept(reading, write: write)
                    case .failure(let error): run.reject(error, report: report)
                    }
                    return run.keepsReading
                }
                if !run.keepsReading { break }
                continue
            }
            run.decoder = LineDecoder(
                format: format, device: options.device ?? ReadingSource.fileDevice(reader.name), requests: requests)
            if options.clock == .wall {
                let lines = LiveLines(reader: reader)
                while run.keepsReading {
                    let (items, ended) = lines.next(timeout: 1)
                    for item in items where run.keepsReading {
                        switch item {
                        case .line(let bytes, let number):
                            bytes.withUnsafeBufferPointer {
                                run.handle($0, number, write: write, report: report)
                            }
                        case .oversized(let number): run.reject(reader.oversizedLineError(line: number), report: report)
                        case .failed(let error): throw error
                        }
                    }
                    if run.keepsReading {
                        run.emit(
                            engine.advance(to: Timestamp(seconds: Date().timeIntervalSince1970)), flush: true,
                            write: write)
                    }
                    if ended { break }
                }
            } else if format == .ndjson && !run.live, let blockSize = options.serialBlockSize {
                try reader.forEachBlock(
                    blockSize: blockSize, oversized: { run.reject(reader.oversizedLineError(line: $0), report: report) }
                ) { block, firstLine in
                    guard run.keepsReading else { return nil }
                    let lines = run.handle(block: block, firstLine: firstLine, write: write, report: report)
                    return run.keepsReading ? lines : nil
                }
            } else {
                try reader.forEachLine(oversized: { run.reject(reader.oversizedLineError(line: $0), report: report) }) {
                    line, number in
                    guard run.keepsReading else { return false }
                    run.handle(line, number, write: write, report: report)
                    return run.keepsReading
                }
            }
            if run.keepsReading, let reading = run.decoder.finish() { run.accept(reading, write: write) }
            if run.keepsReading, let failure = reader.failure { run.reject(failure, report: report) }
            if !run.keepsReading { break }
        }
        // A run stopped early (strict, or interrupted) ends at the clock of the last line it read.
        // (A signal may also end the input while a read waits, before any line notices it.)
        let interrupted = run.interrupted || shouldStop?() == true
        let until = run.badLines.strictFailure == nil && !interrupted ? options.until : nil
        if checkpointing {
            run.emit(engine.finishKeepingHeldReadings(until: until), flush: false, write: write)
            lastCheckpoint = engine.checkpoint()
        } else {
            run.emit(engine.finish(until: until), flush: false, write: write)
        }
        meter?.note(run.summary, always: true)
        run.buffer.append(contentsOf: encoder.footer())
        if !run.buffer.isEmpty { write(run.buffer) }
        steadyStart = run.steadyStart
        var summary = run.summary
        summary.stale = engine.statistics.stale
        summary.skipped = run.badLines.count
        summary.strictFailure = run.badLines.strictFailure
        if let line = run.badLines.unreportedLine { report(line) }
        return summary
    }
}

/// The mutable state of a single-engine run, reached through a reference by the per-line code:
/// local variables captured by the line closures cost a dynamic exclusivity check on every access,
/// which showed in profiles of the per-line path. Confined to the run's thread.
private final class SerialRun {
    let engine: Engine
    let encoder: any EventEncoder
    let meter: ProgressMeter?
    @exclusivity(unchecked) var summary = RunPipeline.Summary()
    @exclusivity(unchecked) var buffer: [UInt8]
    @exclusivity(unchecked) var badLines: BadLineCounter
    /// Whether to read on: false once `--strict` meets a bad line.
    @exclusivity(unchecked) var keepsReading = true
    /// The current input's name (for bad-line reports), whether it is live (its events are
    /// written as they come) and its line decoder.
    @exclusivity(unchecked) var file = ""
    @exclusivity(unchecked) var live = false
    @exclusivity(unchecked) var decoder = LineDecoder(format: .ndjson, device: "", requests: nil)
    /// Taken once the first reading is applied.
    @exclusivity(unchecked) var steadyStart: RunMark?

    init(
        engine: Engine, encoder: any EventEncoder, meter: ProgressMeter?, badLines: BadLineCounter,
        shouldStop: (() -> Bool)?
    ) {
        self.engine = engine
        self.encoder = encoder
        self.meter = meter
        self.badLines = badLines
        self.shouldStop = shouldStop
        buffer = encoder.header()
    }

    /// Encodes and counts `events` (or holds them, while `deferringEncoding`), writing the buffer once it
    /// is large or when `flush` (live input) asks.
    func emit(_ events: [Event], flush: Bool, write: ([UInt8]) -> Void) {
        if deferringEncoding {
            deferredEvents.append(contentsOf: events)
            return
        }
        for event in events { encoder.encode(event, into: &buffer) }
        summary.events += events.count
        if buffer.count >= 1 << 16 || (flush && !buffer.isEmpty) {
            write(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// Applies a reading and writes its events.
    func accept(_ reading: Reading, write: ([UInt8]) -> Void) {
        applied(engine.process(reading), write: write)
    }

    /// Applies a canonical fix line's fields (the common line), its device a range of `bytes`,
    /// and writes its events.
    func accept(
        _ fix: NDJSONReadingDecoder.CanonicalParts, in bytes: UnsafeBufferPointer<UInt8>, write: ([UInt8]) -> Void
    ) {
        let events = engine.process(
            deviceNamed: UnsafeBufferPointer(rebasing: bytes[fix.device]), time: fix.time, coordinate: fix.coordinate,
            accuracy: fix.accuracy)
        applied(events, write: write)
    }

    /// Counts an applied reading and writes its events.
    private func applied(_ events: [Event], write: ([UInt8]) -> Void) {
        summary.readings += 1
        emit(events, flush: live, write: write)
        if summary.readings == 1 { steadyStart = .now(readings: 1) }
        meter?.note(summary)
        if let shouldStop, shouldStop() { interrupt() }
    }

    /// Counts a bad line; under `--strict` it stops the run.
    func reject(_ error: InputError, report: (String) -> Void) {
        keepsReading = badLines.reject(error, report: report)
        if let shouldStop, shouldStop() { interrupt() }
    }

    private func interrupt() {
        interrupted = true
        keepsReading = false
    }

    /// A line of an NDJSON block as the first pass leaves it: a canonical fix's fields (the device
    /// a range of the block), or else where the line lies, to be decoded in full in its turn.
    struct ParsedLine {
        var fix: NDJSONReadingDecoder.CanonicalParts?
        var start: Int
        var end: Int
    }

    /// The current block's lines, kept from block to block.
    @exclusivity(unchecked) var parsedLines: [ParsedLine] = []
    /// While a block's second pass runs, its events wait in `held` and are encoded after it (a
    /// few per cent faster again than encoding between fixes, for the same reason as the passes).
    @exclusivity(unchecked) var deferringEncoding = false
    @exclusivity(unchecked) var deferredEvents: [Event] = []
    /// Asked after each line: `true` stops the run there (see `RunPipeline.shouldStop`).
    let shouldStop: (() -> Bool)?
    /// Whether ``shouldStop`` stopped the run.
    @exclusivity(unchecked) private(set) var interrupted = false

    /// Decodes and applies a block of whole NDJSON lines (``LineReader/forEachBlock(blockSize:oversized:_:)``,
    /// `firstLine` the number of its first) in two passes: the canonical fix lines' fields, then
    /// the engine over every line in order, a line of any other kind decoded in full in its turn
    /// (so a bad line is reported, and `--strict` stops, exactly where it would line by line).
    /// Returns the block's line count.
    ///
    /// The split is for speed alone: a tight parse loop, then the engine, keeps each pass's code
    /// in cache; the blocks are small (128 KiB) so the block and its parsed lines are still in
    /// cache for the second pass.
    func handle(
        block: UnsafeBufferPointer<UInt8>, firstLine: Int, write: ([UInt8]) -> Void, report: (String) -> Void
    ) -> Int {
        parsedLines.removeAll(keepingCapacity: true)
        block.forEachLine { start, end in
            let fix = decoder.canonicalParts(UnsafeBufferPointer(rebasing: block[start..<end]))
            parsedLines.append(ParsedLine(fix: fix?.moved(by: start), start: start, end: end))
        }
        deferringEncoding = true
        defer {
            deferringEncoding = false
            emit(deferredEvents, flush: false, write: write)
            deferredEvents.removeAll(keepingCapacity: true)
        }
        parsedLines.withUnsafeBufferPointer { lines in
            for (offset, line) in lines.enumerated() where keepsReading {
                if let fix = line.fix {
                    accept(fix, in: block, write: write)
                } else {
                    decodeInFull(
                        UnsafeBufferPointer(rebasing: block[line.start..<line.end]), firstLine + offset, write: write,
                        report: report)
                }
            }
        }
        return parsedLines.count
    }

    /// Decodes and applies one line of the current input.
    func handle(_ line: UnsafeBufferPointer<UInt8>, _ number: Int, write: ([UInt8]) -> Void, report: (String) -> Void) {
        if let fix = decoder.canonicalParts(line) { return accept(fix, in: line, write: write) }
        decodeInFull(line, number, write: write, report: report)
    }

    /// Decodes and applies a line that is not a canonical fix.
    private func decodeInFull(
        _ line: UnsafeBufferPointer<UInt8>, _ number: Int, write: ([UInt8]) -> Void, report: (String) -> Void
    ) {
        do throws(LineError) {
            if let reading = try decoder.decode(line, number: number, afterCanonical: true) {
                accept(reading, write: write)
            }
        } catch {
            reject(error.located(file: file, line: number), report: report)
        }
    }
}

@available(*, unavailable)
extension RunPipeline: Sendable {}

/// Calls the progress closure every 16 Ki readings with the counts and bytes read so far.
final class ProgressMeter {
    private let readers: [LineReader]
    private let report: (RunPipeline.Progress) -> Void
    private let totalBytes: Int?

    init(readers: [LineReader], report: @escaping (RunPipeline.Progress) -> Void) {
        self.readers = readers
        self.report = report
        let sizes = readers.compactMap(\.size)
        totalBytes = sizes.count == readers.count ? sizes.reduce(0, +) : nil
    }

    /// Reports when the count of readings is a multiple of 16 Ki (or `always`). Inlined, so the
    /// summary is not copied for the readings that report nothing.
    @inline(__always)
    func note(_ summary: RunPipeline.Summary, always: Bool = false) {
        guard always || summary.readings & 0x3FFF == 0 else { return }
        report(
            RunPipeline.Progress(
                readings: summary.readings, events: summary.events,
                bytesRead: readers.reduce(0) { $0 + $1.bytesRead }, totalBytes: totalBytes))
    }
}
