import Dispatch
import Fenceline
import FencelineFormats
import Foundation

/// Where a run's results go, whichever session applies its readings: the events (encoded and
/// written in buffers), the bad lines (reported, counted, `--strict`), the counts of the summary
/// and the progress display. The one run driver (``RunPipeline``) owns it and every session
/// reports to it, so bad lines, the summary and output behave the same with one engine or many.
///
/// Confined to the run's thread; its properties are `@exclusivity(unchecked)` because the per-line
/// code reaches them through closures, where each access otherwise costs a dynamic check.
final class RunOutput {
    let encoder: any EventEncoder
    private let write: ([UInt8]) -> Void
    private let report: (String) -> Void
    let meter: ProgressMeter?
    /// Asked after each bad line, each applied line of a live input and every 64th of a file:
    /// `true` stops the run there (see `RunPipeline.shouldStop`). Asking after every line of a
    /// file (a closure call, with its context retained and released) showed among a run's
    /// retains and releases in profiles.
    let shouldStop: (() -> Bool)?
    @exclusivity(unchecked) var summary = RunPipeline.Summary()
    @exclusivity(unchecked) var badLines: BadLineCounter
    @exclusivity(unchecked) private var buffer: [UInt8]
    /// Whether to read on: false once `--strict` meets a bad line or the run is interrupted.
    @exclusivity(unchecked) var keepsReading = true
    /// The most events to write; past it the run stops as if interrupted.
    @exclusivity(unchecked) var eventLimit: Int?
    /// Whether ``shouldStop`` stopped the run.
    @exclusivity(unchecked) private(set) var interrupted = false
    /// Whether a stop asked for may wait for the instant at the clock to end, and for how long
    /// (allowed for an NDJSON or CSV input of a run that writes a checkpoint): the checkpoint is
    /// then taken between two times, and resuming on the lines not applied goes on exactly
    /// (SPEC §10).
    @exclusivity(unchecked) var instantStop = InstantStop()
    /// A stop was asked for and waits for the first line of a later time than the clock, which
    /// the session then leaves unapplied (`OneEngineSession.endsBeforeLaterInstant`); a pipe with
    /// nothing ready, an input of another kind next, or ``stoppingTimedOut`` stops it where it is.
    @exclusivity(unchecked) private(set) var stopping = false
    /// The current input's name (for bad-line reports), whether it is live (its events are written
    /// as they come) and the decoder of its lines; set by the driver as each input begins.
    @exclusivity(unchecked) var file = ""
    @exclusivity(unchecked) var live = false
    /// Whether the current input is a regular file (a sharded session then overlaps its blocks).
    @exclusivity(unchecked) var readsFile = false
    @exclusivity(unchecked) var decoder = LineDecoder(format: .ndjson, device: "", requests: nil)
    /// The moment the first reading was applied (see `RunPipeline.steadyStart`).
    @exclusivity(unchecked) var steadyStart: RunMark?
    /// While set, events wait in ``deferredEvents`` and are encoded when it is cleared: a block's
    /// engine pass then keeps its own code in cache (see `OneEngineSession.apply(block:)`).
    @exclusivity(unchecked) private(set) var deferringEncoding = false
    @exclusivity(unchecked) private var deferredEvents: [Event] = []
    /// With several engines, events are encoded on a thread of their own (see ``BackgroundEncoding``).
    private let background: BackgroundEncoding?

    init(
        encoder: any EventEncoder, write: @escaping ([UInt8]) -> Void, report: @escaping (String) -> Void,
        meter: ProgressMeter?, badLines: BadLineCounter, shouldStop: (() -> Bool)?, encodesInBackground: Bool
    ) {
        self.encoder = encoder
        self.write = write
        self.report = report
        self.meter = meter
        self.badLines = badLines
        self.shouldStop = shouldStop
        background = encodesInBackground ? BackgroundEncoding(encoder: encoder) : nil
        buffer = encoder.header()
    }

    /// Encodes and counts `events` (or defers them), writing the buffer once it is large or when
    /// `flush` (live input) asks. In the background, the encoded bytes are taken as they are ready,
    /// and all of them when `flush`.
    func emit(_ events: [Event], flush: Bool) {
        if deferringEncoding {
            deferredEvents.append(contentsOf: events)
            return
        }
        var events = events
        if let eventLimit, summary.events + events.count > eventLimit {
            // Exactly the limit's events are written, wherever a batch or a spill ends.
            events.removeLast(min(events.count, summary.events + events.count - eventLimit))
            if !summary.reachedEventLimit {
                summary.reachedEventLimit = true
                interrupt()
            }
        }
        summary.events += events.count
        if let background {
            if !events.isEmpty { background.submit(events) }
            for part in flush ? background.finish() : background.take() { buffer.append(contentsOf: part) }
        } else {
            for event in events { encoder.encode(event, into: &buffer) }
        }
        if buffer.count >= 1 << 16 || (flush && !buffer.isEmpty) {
            write(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// Writes the events of a long run of timers now (``Engine/spill``), after any the current
    /// block holds back, and says whether to go on (`false` once the run is to stop).
    func spill(_ events: [Event]) -> Bool {
        let wasDeferring = deferringEncoding
        deferringEncoding = false
        emit(deferredEvents, flush: false)
        deferredEvents.removeAll(keepingCapacity: true)
        emit(events, flush: live)
        deferringEncoding = wasDeferring
        // A jump stops at once, not at the end of an instant: it may be long.
        if let shouldStop, shouldStop() { interrupt() }
        return keepsReading
    }

    /// Holds the events of the work `body` does and encodes them after it.
    func deferringEncoding<Result>(_ body: () -> Result) -> Result {
        deferringEncoding = true
        defer {
            deferringEncoding = false
            emit(deferredEvents, flush: false)
            deferredEvents.removeAll(keepingCapacity: true)
        }
        return body()
    }

    /// Counts one applied reading and writes its events.
    @inline(__always)
    func applied(_ events: [Event]) {
        summary.readings += 1
        emit(events, flush: live)
        if summary.readings == 1 { steadyStart = .now(readings: 1) }
        meter?.note(summary)
        if !stopping, live || summary.readings & 63 == 0, let shouldStop, shouldStop() { stopAsked() }
    }

    /// Counts a bad line (located); under `--strict` it stops the run.
    func reject(_ error: InputError) {
        guard keepsReading else { return }
        keepsReading = badLines.reject(error, report: report)
        if !stopping, let shouldStop, shouldStop() { stopAsked() }
    }

    /// Counts a bad line of the current input.
    func reject(_ error: LineError, line: Int) {
        reject(error.located(file: file, line: line))
    }

    /// A stop asked for (a signal): at once, or at the end of the instant at the clock.
    private func stopAsked() {
        guard instantStop.isAllowed else { return interrupt() }
        stopping = true
        instantStop.start()
    }

    /// Whether a stop has waited as long as it may for its instant to end: it is then made where
    /// the run is. Asked for every line while ``stopping``.
    var stoppingTimedOut: Bool { stopping && instantStop.hasTimedOut }

    /// Stops the run: nothing more is read.
    func interrupt() {
        interrupted = true
        keepsReading = false
    }

    /// Writes the last events and the encoder's footer and returns the summary.
    func finish(_ events: [Event], stale: Int) -> RunPipeline.Summary {
        emit(events, flush: true)
        meter?.note(summary, always: true)
        buffer.append(contentsOf: encoder.footer())
        if !buffer.isEmpty { write(buffer) }
        buffer.removeAll()
        var summary = summary
        summary.stale = stale
        summary.skipped = badLines.count
        summary.strictFailure = badLines.strictFailure
        if let line = badLines.unreportedLine { report(line) }
        return summary
    }
}

/// Encodes batches of events in order on a serial queue of its own, so the encoding overlaps the
/// next batch's parse and apply; the run's thread takes the bytes (``take()``) and alone writes
/// them. At most two batches wait to be encoded: a third waits for the first.
private final class BackgroundEncoding: @unchecked Sendable {
    private let queue = DispatchQueue(label: "fenceline.encoding")
    private let encoder: any EventEncoder
    private let lock = NSLock()
    /// Encoded batches not yet taken, in order; under `lock`.
    private var encoded: [[UInt8]] = []
    private let slots = DispatchSemaphore(value: 2)

    init(encoder: any EventEncoder) {
        self.encoder = encoder
    }

    /// Queues a batch.
    func submit(_ events: [Event]) {
        slots.wait()
        queue.async { [self] in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(events.count * 256)
            for event in events { encoder.encode(event, into: &bytes) }
            lock.withLock { encoded.append(bytes) }
            slots.signal()
        }
    }

    /// The batches encoded since the last call, in order.
    func take() -> [[UInt8]] {
        lock.withLock {
            defer { encoded.removeAll() }
            return encoded
        }
    }

    /// Waits for every queued batch and takes them.
    func finish() -> [[UInt8]] {
        queue.sync {}
        return take()
    }
}

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
