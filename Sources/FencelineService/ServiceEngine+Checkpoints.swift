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

    /// A checkpoint's state, taken on the actor (put together off it), with what it covers.
    struct EncodedCheckpoint: Sendable {
        var state: CheckpointParts
        var journalPosition: Int
        /// The position the last checkpoint covered, which stands again if this one fails.
        var previousPosition: Int
        var lastSeq: Int
        var started: ContinuousClock.Instant
    }

    /// Requests added and catalogs given since the last look, encoded and hashed for checkpoints
    /// on another thread: with a large catalog, that was most of the first checkpoint, which
    /// holds up ingest.
    func prepareCheckpointsAside() {
        guard !preparingAside, let preparation = engine.checkpointPreparation() else { return }
        preparingAside = true
        let target = reloads
        Task.detached {
            let prepared = preparation.make()
            let released = await self.keep(prepared, for: target)
            // The last references to the given requests go here, not on the actor: freeing
            // 100k requests is tens of milliseconds.
            withExtendedLifetime((preparation, released)) {}
        }
    }

    private func keep(_ prepared: PreparedCheckpoint, for target: Int) -> [NotificationRequest] {
        preparingAside = false
        // A reload may have put another engine in its place, with other slots.
        return reloads == target ? engine.keep(prepared) : []
    }

    /// The engine's state now, if anything was applied since the last checkpoint; call it only
    /// with nothing applied that is not written.
    func encodeCheckpoint() -> EncodedCheckpoint? {
        guard journalPosition > checkpointPosition else { return nil }
        let started = ContinuousClock.now
        let state = engine.checkpointParts()
        let previousPosition = checkpointPosition
        checkpointPosition = journalPosition
        linesSinceCheckpoint = 0
        // Every event released is in the log: the state's next seq follows the last one logged.
        return EncodedCheckpoint(
            state: state, journalPosition: journalPosition, previousPosition: previousPosition,
            lastSeq: engine.nextEventSequence - 1, started: started)
    }

    /// Writes an encoded state to the store, off the actor.
    func write(_ encoded: EncodedCheckpoint) async throws {
        let store = self.store
        let spacing = settings.retention.map { $0 / ServiceEngine.checkpointsPerRetention }
        let written = await Task.detached {
            Result {
                let state = encoded.state.assembled()
                try store.saveCheckpoint(
                    state, journalPosition: encoded.journalPosition, lastSeq: encoded.lastSeq, spacing: spacing)
                try store.forgetAnswers(olderThan: 25 * 3600)
                return state.count
            }
        }.value
        let now = ContinuousClock.now
        lastCheckpoint = (now, now - encoded.started)
        let bytes: Int
        switch written {
        case .success(let count): bytes = count
        case .failure(let error):
            // The next chance writes one again.
            checkpointPosition = encoded.previousPosition
            linesSinceCheckpoint = settings.checkpointEvery
            throw error
        }
        logger.info(
            "checkpoint written",
            metadata: [
                "bytes": "\(bytes)", "journalPosition": "\(encoded.journalPosition)",
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
