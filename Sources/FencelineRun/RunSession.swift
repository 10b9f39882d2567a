public import Fenceline
import FencelineFormats

/// One way to drive the engine, whatever holds it: readings in, the clock moved on, the state kept,
/// the input ended; events out in SPEC §4 order, numbered from 1 (or on from a resumed state).
///
/// ``Engine`` is the one-engine session; ``ShardedSession`` spreads the devices over several
/// engines on several threads and gives byte-identical events. `fenceline run`, `render`,
/// `explain` and `test` drive one through ``RunPipeline``; a server or a queue consumer may hold
/// one directly (or ``EngineSession``, the actor over an engine, from async code).
public protocol RunSession: AnyObject {
    /// Applies a reading (a fix, a sighting or a control record) and returns the events released
    /// by then. One engine releases an instant's events when the clock passes it; a sharded
    /// session releases a batch at a time, so these may close instants of earlier readings.
    func process(_ reading: Reading) -> [Event]

    /// Moves the clock to `time` (a live feed's wall clock) and returns every event due by then.
    func advance(to time: Timestamp) -> [Event]

    /// Ends the input: fires every timer due by `until` (default: the clock) and returns the
    /// remaining events. With `keepingHeldReadings`, readings held by a reorder window stay held
    /// (the session is about to be checkpointed) instead of being applied.
    func finish(until: Timestamp?, keepingHeldReadings: Bool) -> [Event]

    /// The whole state, which `Engine(resuming:)` goes on from exactly.
    /// - Throws: ``ShardedSession/CheckpointUnavailable`` from a sharded session, whose devices
    ///   are in several engines (run one engine to checkpoint: the events are the same).
    func checkpoint() throws -> [UInt8]

    /// Readings skipped as stale (older than their device's last).
    var staleReadings: Int { get }

    /// Fixes some request's position filters dropped or took only as a refresh (SPEC §12).
    var filteredReadings: Int { get }
}

extension Engine: RunSession {
    public var staleReadings: Int { statistics.stale }
    public var filteredReadings: Int { statistics.filtered }
}

/// What the run driver asks of a session besides ``RunSession``: the inputs' lines handed over
/// undecoded, so each variant decodes them its own fastest way (one engine in two passes over a
/// block, several engines with the parse spread over threads), reporting bad lines and counts to
/// the run's ``RunOutput``.
protocol DrivenSession: RunSession {
    /// Applies one decoded reading of the current input and reports its events.
    func apply(_ reading: Reading, output: RunOutput)

    /// Decodes and applies one line of the current input (numbered `number`).
    func apply(line: UnsafeBufferPointer<UInt8>, number: Int, output: RunOutput)

    /// Decodes and applies a block of whole NDJSON lines, the first numbered `firstLine`, in
    /// order, stopping where the output stops reading; returns the block's line count.
    func apply(block: UnsafeBufferPointer<UInt8>, firstLine: Int, output: RunOutput) -> Int

    /// The current input has ended: apply what is still queued of it.
    func endInput(output: RunOutput)
}
