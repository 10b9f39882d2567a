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
        /// Forget a device silent this long (`--device-ttl`, SPEC §12).
        public var deviceTTL: TimeSpan?
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
        /// Fixes position filters dropped or took as a refresh only; `nil` (not shown) when the
        /// catalog has no filters.
        public var filtered: Int?
        /// Events written.
        public var events = 0
        /// Under `--strict`, the bad line that stopped the run.
        public var strictFailure: InputError?
        /// Whether the run stopped at ``RunPipeline/maximumEvents``.
        public var reachedEventLimit = false

        /// The one-line summary for stderr.
        public var line: String {
            "fenceline: \(counted(readings, "reading")), \(skipped) skipped, \(stale) stale, \(counted(events, "event"))"
                + (filtered.map { ", filtered \($0)" } ?? "")
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
    /// Called with each reading applied, in order, before the engine sees it (`fenceline render`
    /// keeps the fixes it draws).
    public var observer: ((Reading) -> Void)?
    /// The most events the run writes before it stops (``Summary/reachedEventLimit``), for drivers
    /// that keep them all in memory (`render`, `explain`); `nil`: no limit.
    public var maximumEvents: Int?
    /// The engine of the last run, for reading its notification state afterwards (one engine only).
    public private(set) var lastEngine: Engine?
    /// The session of the last run, kept as long as the pipeline: a process that ends right after
    /// (and keeps the pipeline) does not spend time tearing its engines down.
    public private(set) var lastSession: (any RunSession)?
    /// A checkpoint to start from instead of the catalog alone (`--resume`): the catalog's
    /// requests are then added to it, as `add` records would be, except those identical to a
    /// request it holds, which go on as they were (SPEC §10).
    public var resumeState: [UInt8]?
    /// Whether the run ends with a checkpoint (`--checkpoint`): the run ends as any run does, but
    /// readings held by the reorder window stay held, and ``lastCheckpoint`` holds the state.
    /// Such a run uses one engine whatever `threads` says.
    public var checkpointing = false
    /// Asked after each line of a live input, every 64th of a file, when set: `true` stops reading
    /// there (SIGINT or SIGTERM under `--checkpoint`), or at the end of the instant at hand when
    /// the input allows it (see `RunOutput.stopping`); the run then ends as if the input had ended.
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

    /// Whether the run spreads its devices over several engines: a checkpoint (written or
    /// resumed) is one engine's state, a trace follows one engine, and a request's own
    /// `maxFuture` needs the one clock of all devices (``Catalog/needsOneClock``).
    var isSharded: Bool {
        options.threads > 1 && !checkpointing && resumeState == nil && tracer == nil && observer == nil
            && !catalog.needsOneClock
    }

    /// The session the run drives: one engine, or engines sharded across threads.
    private func makeSession() throws -> any DrivenSession {
        let configuration = Engine.Configuration(
            reorderWindow: options.reorderWindow, deliveredLimit: options.deliveredLimit, deviceTTL: options.deviceTTL)
        if isSharded {
            return try ShardedSession(
                catalog: catalog, configuration: configuration, threads: options.threads,
                piecesPerThread: options.piecesPerThread, logger: logger)
        }
        let engine: Engine
        if let resumeState {
            engine = try Engine(resuming: resumeState, configuration: configuration, logger: logger)
            try engine.add(catalog, keepingIdenticalRequests: true)
        } else {
            engine = try Engine(catalog: catalog, configuration: configuration, logger: logger)
        }
        if let tracer { engine.trace(tracer) }
        lastEngine = engine
        let session = OneEngineSession(engine: engine)
        session.measuresLeadFromWallClock = options.clock == .wall
        return session
    }

    /// Runs over `inputs` in order (`-` is standard input), calling `write` with output bytes,
    /// `report` with each diagnostic line and `progress` every few thousand readings.
    ///
    /// This is the one run driver: every input kind (NDJSON files in blocks, pipes, live input on
    /// the wall clock, CSV, NMEA, GPX) is read here and handed to the session, and bad lines,
    /// `--strict`, the summary, progress and output go through one ``RunOutput``.
    /// - Throws: ``InputError`` when an input cannot be opened (nothing is read then),
    ///   ``CatalogError`` when the catalog is invalid, or ``CheckpointError`` when the resumed
    ///   state is not one this build reads.
    public func run(
        inputs: [String], write: ([UInt8]) -> Void, report: (String) -> Void, progress: ((Progress) -> Void)? = nil
    ) throws -> Summary {
        try withoutActuallyEscaping(write) { write in
            try withoutActuallyEscaping(report) { report in
                try drive(inputs: inputs, write: write, report: report, progress: progress)
            }
        }
    }

    private func drive(
        inputs: [String], write: @escaping ([UInt8]) -> Void, report: @escaping (String) -> Void,
        progress: ((Progress) -> Void)?
    ) throws -> Summary {
        let readers = try inputs.map { path throws(InputError) in try LineReader(path: path) }
        for reader in readers { reader.endsOnInterruption = shouldStop }
        // A stop that may wait for the instant's end reads on what a pipe already holds.
        let instantStop = InstantStop()
        for reader in readers { reader.readsReadyInputOnInterruption = { instantStop.readsOn() } }
        steadyStart = nil
        lastCheckpoint = nil
        lastEngine = nil
        let session = try makeSession()
        lastSession = session
        let output = RunOutput(
            encoder: encoder, write: write, report: report,
            meter: progress.map { ProgressMeter(readers: readers, report: $0) },
            badLines: BadLineCounter(maximumReported: options.maximumReported, strict: options.strict),
            shouldStop: shouldStop, encodesInBackground: session is ShardedSession)
        output.eventLimit = maximumEvents
        output.instantStop = instantStop
        // One engine writes the events of a clock jump as it makes them (a sharded run holds a
        // batch's events to merge them).
        lastEngine?.spill = { [unowned output] events in output.spill(events) }
        defer { lastEngine?.spill = nil }
        // A resumed engine's defaults and categories are those its `add` records are read with.
        var requests =
            if resumeState != nil, let engine = lastEngine {
                NDJSONReadingDecoder.RequestContext(
                    decoder: catalogDecoder, defaults: engine.requestDefaults,
                    categories: engine.notificationCategories)
            } else {
                NDJSONReadingDecoder.RequestContext(decoder: catalogDecoder, catalog: catalog)
            }
        // A pair may span the devices of two shards: an `add` of a proximity request is refused
        // rather than pairing each shard's devices alone.
        requests.refusesProximity = session is ShardedSession
        for reader in readers {
            guard output.keepsReading else { break }
            output.file = reader.name
            output.readsFile = reader.size != nil
            output.live = reader.name == "-" || options.clock == .wall
            let format = try InputFormat.of(reader, forced: options.inputFormat)
            // Lines that carry their own time, applied as read (no reorder window, no wall clock:
            // the clock would follow the held readings or the wall, not the lines): a stop can
            // wait for the instant's end, into this input from the one before it too.
            instantStop.isAllowed =
                checkpointing && session is OneEngineSession && options.reorderWindow == .zero
                && options.clock != .wall && (format == .ndjson || format == .csv)
            if output.stopping && !instantStop.isAllowed {
                output.interrupt()
                break
            }
            output.decoder = LineDecoder(
                format: format, device: options.device ?? ReadingSource.fileDevice(reader.name), requests: requests)
            try read(reader, format: format, requests: requests, into: session, output: output)
            // An NMEA epoch still open came before the end or the stop (`--strict`, a signal).
            if let reading = output.decoder.finish() { apply(reading, to: session, output: output) }
            session.endInput(output: output)
            if output.keepsReading, let failure = reader.failure { output.reject(failure) }
            // A pipe the stop ended: the inputs after it are not read.
            if reader.wasInterrupted { output.interrupt() }
        }
        // A run stopped early (strict, or interrupted) ends at the clock of the last line it read.
        // (A signal may also end the input while a read waits, before any line notices it.)
        let interrupted = output.interrupted || shouldStop?() == true
        var until = output.badLines.strictFailure == nil && !interrupted ? options.until : nil
        if let sharded = session as? ShardedSession, let target = until {
            walk(sharded, to: target, output: output)
            if !output.keepsReading || shouldStop?() == true { until = nil }
        }
        let stoppedInInput = lastEngine?.stoppedInJump == true
        let last =
            (session as? ShardedSession)?.finish(until: until, keepingHeldReadings: checkpointing, output: output)
            ?? session.finish(until: until, keepingHeldReadings: checkpointing)
        (session as? OneEngineSession)?.finishResponses(output: output)
        if checkpointing { lastCheckpoint = try session.checkpoint() }
        if let engine = lastEngine, engine.stoppedInJump, let clock = engine.clock {
            report(
                stoppedInInput
                    ? "fenceline: stopped in a jump of the clock at \(clock.rfc3339): the line that moved it was not applied; resume from that line"
                    : "fenceline: stopped moving the clock to --until at \(clock.rfc3339)")
        }
        var summary = output.finish(last, stale: session.staleReadings)
        if catalog.usesFilters || session.filteredReadings > 0 { summary.filtered = session.filteredReadings }
        steadyStart = output.steadyStart
        return summary
    }

    /// Moves a sharded session's clock to `target` in steps, writing each step's events: it merges
    /// a batch's events in memory, so one far `--until` would hold every event of the jump. The
    /// step doubles while steps give few events and halves when they give many, and is at most
    /// 30 days, so a quiet stretch cannot grow it past what a burst after it would fit in (timers
    /// repeat at most once a minute); the events are the same as one move's.
    private static let longestWalkStep: Int64 = 30 * 86_400_000_000

    private func walk(_ session: ShardedSession, to target: Timestamp, output: RunOutput) {
        guard var clock = session.clock, clock < target else { return }
        var step: Int64 = 3_600_000_000
        while clock < target && output.keepsReading && shouldStop?() != true {
            let next =
                target.microseconds - clock.microseconds <= step
                ? target : Timestamp(microseconds: clock.microseconds + step)
            let events = session.advance(to: next, output: output)
            output.emit(events, flush: false)
            if events.count > 100_000 {
                step = max(step / 2, 1)
            } else if events.count < 10_000 {
                step = min(step * 2, Self.longestWalkStep)
            }
            clock = next
        }
    }

    /// Reads one input into the session, by the source its kind needs.
    private func read(
        _ reader: LineReader, format: InputFormat, requests: NDJSONReadingDecoder.RequestContext,
        into session: any DrivenSession, output: RunOutput
    ) throws {
        let oversized = { (number: Int) in output.reject(reader.oversizedLineError(line: number)) }
        if format == .gpx {
            // A recording rather than a stream: read whole, its points in time order.
            let source = try ReadingSource(reader: reader, format: format, device: options.device, requests: requests)
            try source.forEach { item in
                switch item {
                case .success(let reading): apply(reading, to: session, output: output)
                case .failure(let error): output.reject(error)
                }
                return output.keepsReading
            }
        } else if options.clock == .wall {
            // Live: lines as they come, and the wall clock moved on at least once a second.
            let lines = LiveLines(reader: reader)
            while output.keepsReading {
                let (items, ended) = lines.next(timeout: 1)
                for item in items where output.keepsReading {
                    switch item {
                    case .line(let bytes, let number):
                        bytes.withUnsafeBufferPointer { apply(line: $0, number: number, to: session, output: output) }
                    case .oversized(let number): oversized(number)
                    case .failed(let error): throw error
                    }
                }
                if output.keepsReading {
                    output.emit(session.advance(to: Timestamp(seconds: Date().timeIntervalSince1970)), flush: true)
                }
                if ended { break }
            }
        } else if format == .ndjson || format == .csv, observer == nil,
            let blockSize = blockSize(of: session, readsFile: output.readsFile)
        {
            try reader.forEachBlock(blockSize: blockSize, oversized: oversized) { block, firstLine in
                guard output.keepsReading else { return nil }
                let lines = session.apply(block: block, firstLine: firstLine, output: output)
                return output.keepsReading ? lines : nil
            }
        } else {
            try reader.forEachLine(oversized: oversized) { line, number in
                guard output.keepsReading else { return false }
                apply(line: line, number: number, to: session, output: output)
                return output.keepsReading
            }
        }
    }

    /// The size of the NDJSON blocks `session` reads an input in, or `nil` for line by line.
    private func blockSize(of session: any DrivenSession, readsFile: Bool) -> Int? {
        if session is ShardedSession { return options.readBlockSize }
        return readsFile ? options.serialBlockSize : nil
    }

    private func apply(_ reading: Reading, to session: any DrivenSession, output: RunOutput) {
        observer?(reading)
        session.apply(reading, output: output)
    }

    private func apply(line: UnsafeBufferPointer<UInt8>, number: Int, to session: any DrivenSession, output: RunOutput)
    {
        guard let observer else { return session.apply(line: line, number: number, output: output) }
        do throws(LineError) {
            if let reading = try output.decoder.decode(line, number: number) {
                observer(reading)
                session.apply(reading, output: output)
            }
        } catch {
            output.reject(error, line: number)
        }
    }
}

@available(*, unavailable)
extension RunPipeline: Sendable {}

/// A stop that waits for the end of the instant at hand (see `RunOutput.stopping`): whether the
/// input being read allows it, and how long it may wait, two seconds from its start (the run
/// asking it to stop, or a reader first asking whether to read on), so that a pipe always ready
/// with lines of one time, or blank ones, cannot keep the run reading. Shared by the run's thread
/// and its readers, which may inflate on a thread of their own: hence the lock.
final class InstantStop: @unchecked Sendable {
    private let lock = NSLock()
    private var allowed = false
    private var deadline: UInt64?

    /// Whether the input being read lets a stop wait for its instant's end (set before each input).
    var isAllowed: Bool {
        get { lock.withLock { allowed } }
        set { lock.withLock { allowed = newValue } }
    }

    /// Starts the wait's two seconds, unless they run already.
    func start() {
        lock.withLock { startLocked() }
    }

    /// Whether the wait has run out.
    var hasTimedOut: Bool {
        lock.withLock { deadline.map { DispatchTime.now().uptimeNanoseconds > $0 } ?? false }
    }

    /// A reader's question once the run is asked to stop: whether to read on what a pipe holds
    /// ready, while waiting is allowed and has not run out.
    func readsOn() -> Bool {
        lock.withLock {
            guard allowed else { return false }
            startLocked()
            return DispatchTime.now().uptimeNanoseconds <= deadline!
        }
    }

    private func startLocked() {
        if deadline == nil { deadline = DispatchTime.now().uptimeNanoseconds + 2_000_000_000 }
    }
}
