import Fenceline
import Foundation
import Logging

/// Checkpoints of the service's engine: encoded on the actor between batches, written off it
/// while ingest goes on, and the retention prune that follows one.
extension ServiceEngine {
    /// Keeps the engine's state with the journal position it covers, and forgets idempotency
    /// answers past their 24 hours.
    func checkpoint() async throws {
        // The write in flight first: once everything applied is written, the state is encoded
        // with no suspension between, so no batch can slip in ahead of the store.
        await checkpointWrite?.value
        await settle()
        guard let encoded = encodeCheckpoint() else { return }
        try await write(encoded)
    }

    /// A checkpoint's state, encoded on the actor, with what it covers.
    struct EncodedCheckpoint: Sendable {
        var state: [UInt8]
        var journalPosition: Int
        var lastSeq: Int
        var started: ContinuousClock.Instant
    }

    /// Requests added and catalogs given since the last look, encoded and hashed for checkpoints
    /// on another thread: with a large catalog, that was most of the first checkpoint, which
    /// holds up ingest.
    func prepareCheckpointsAside() {
        guard !preparingAside, let preparation = engine.checkpointPreparation() else { return }
        preparingAside = true
        let target = engine
        Task {
            let prepared = await Task.detached { preparation.make() }.value
            // A reload may have put another engine in its place, with other slots.
            if self.engine === target { self.engine.keep(prepared) }
            self.preparingAside = false
        }
    }

    /// The engine's state now, if anything was applied since the last checkpoint; call it only
    /// with nothing applied that is not written.
    func encodeCheckpoint() -> EncodedCheckpoint? {
        guard journalPosition > checkpointPosition else { return nil }
        let started = ContinuousClock.now
        let state = engine.checkpoint()
        checkpointPosition = journalPosition
        linesSinceCheckpoint = 0
        // Every event released is in the log: the state's next seq follows the last one logged.
        return EncodedCheckpoint(
            state: state, journalPosition: journalPosition, lastSeq: engine.nextEventSequence - 1, started: started)
    }

    /// Writes an encoded state to the store, off the actor.
    func write(_ encoded: EncodedCheckpoint) async throws {
        let store = self.store
        let spacing = settings.retention.map { $0 / ServiceEngine.checkpointsPerRetention }
        let written = await Task.detached {
            Result {
                try store.saveCheckpoint(
                    encoded.state, journalPosition: encoded.journalPosition, lastSeq: encoded.lastSeq, spacing: spacing)
                try store.forgetAnswers(olderThan: 25 * 3600)
            }
        }.value
        let now = ContinuousClock.now
        lastCheckpoint = (now, now - encoded.started)
        if case .failure(let error) = written {
            // The next chance writes one again.
            checkpointPosition = 0
            linesSinceCheckpoint = settings.checkpointEvery
            throw error
        }
        logger.info(
            "checkpoint written",
            metadata: [
                "bytes": "\(encoded.state.count)", "journalPosition": "\(encoded.journalPosition)",
                "seconds": "\(String(format: "%.3f", Self.seconds(now - encoded.started)))",
            ])
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// With `--retention`, checkpoints are kept this many times per retention period, so that
    /// a prune drops all but at most this share of the period's journal beyond what it must keep.
    static let checkpointsPerRetention = 16.0

    /// `--retention`: checkpoints what changed, then drops the journal and the log up to the
    /// newest checkpoint older than the retention period.
    func prune(now: Double) async throws -> ServiceStore.Pruned {
        guard let retention = settings.retention else { return ServiceStore.Pruned() }
        try await checkpoint()
        return try store.prune(before: now - retention)
    }
}
