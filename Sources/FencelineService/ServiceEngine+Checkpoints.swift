import Fenceline
import Foundation
import Logging

/// Checkpoints of the service's engine: taken in parts on the actor between batches, put
/// together and written off it while ingest goes on, and the retention prune that follows one.
extension ServiceEngine {
    /// Keeps the engine's state with the journal position it covers, and forgets idempotency
    /// answers past their 24 hours.
    func checkpoint() async throws {
        // One write at a time (a table is dropped with the last listed checkpoint that uses it,
        // so writes listed out of order could drop the one the newest needs), and the engine's
        // state the store's: once everything applied is written, the state is encoded with no
        // suspension between, so no batch can slip in ahead of the store.
        while true {
            if let inFlight = checkpointWrite {
                await inFlight.value
            } else if paused {
                await waitWhilePaused()
            } else {
                await settle()
                if checkpointWrite == nil && !paused { break }
            }
        }
        guard let encoded = encodeCheckpoint() else { return }
        let writing = Task { try await self.write(encoded) }
        checkpointWrite = Task {
            _ = await writing.result
            self.checkpointWrite = nil
        }
        try await writing.value
    }

    /// A checkpoint's state, taken on the actor (put together off it), with what it covers.
    struct EncodedCheckpoint: Sendable {
        var state: CheckpointParts
        /// The request table it uses, `nil` to write a new one of every live request.
        var table: RequestTable?
        /// The engine it was taken from (``reloads``).
        var engine: Int
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
            await self.checkpointForTable()
        }
    }

    /// The engine's first checkpoint, as soon as its requests are prepared: it writes their
    /// table (a large catalog's worth), which those that follow refer to.
    private func checkpointForTable() async {
        guard requestTable == nil, checkpointWrite == nil, !preparingAside, !paused else { return }
        await settle()
        guard requestTable == nil, checkpointWrite == nil, !preparingAside, let encoded = encodeCheckpoint() else {
            return
        }
        writeAside(encoded)
    }

    /// Writes `encoded` while ingest goes on; one such write at a time.
    func writeAside(_ encoded: EncodedCheckpoint) {
        checkpointWrite = Task {
            do { try await self.write(encoded) } catch {
                self.logger.error("checkpoint failed", metadata: ["error": "\(error)"])
            }
            self.checkpointWrite = nil
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
        // While a batch is refused the engine holds lines the store does not.
        guard journalPosition > checkpointPosition, !paused else { return nil }
        let started = ContinuousClock.now
        let state = engine.checkpointParts()
        // Requests added since the table was written are encoded into each checkpoint: once
        // they are many, a new table holds them all.
        var table = requestTable
        if let current = table {
            let missing = state.slots.reduce(0) { $0 + (current.holds($1) ? 0 : 1) }
            if missing > max(Self.requestsBesideTable, current.count / 8) { table = nil }
        }
        let previousPosition = checkpointPosition
        checkpointPosition = journalPosition
        linesSinceCheckpoint = 0
        // Every event released is in the log: the state's next seq follows the last one logged.
        return EncodedCheckpoint(
            state: state, table: table, engine: reloads, journalPosition: journalPosition,
            previousPosition: previousPosition, lastSeq: engine.nextEventSequence - 1, started: started)
    }

    /// How many requests a checkpoint encodes beside its table before a new table is written
    /// (beyond an eighth of the table's).
    static let requestsBesideTable = 1_000

    /// A table of request encodings written for the engine's checkpoints
    /// (``ServiceCheckpointFile``): its file, checksum and the slots it holds. It is the
    /// engine's own: one built from a checkpoint numbers its requests afresh.
    struct RequestTable: Sendable {
        var file: String
        var checksum: UInt64
        var slots: [Bool]
        var count: Int

        init(file: String, checksum: UInt64, slots list: [Int]) {
            self.file = file
            self.checksum = checksum
            slots = [Bool](repeating: false, count: (list.max() ?? -1) + 1)
            for slot in list { slots[slot] = true }
            count = list.count
        }

        func holds(_ slot: Int) -> Bool { slot < slots.count && slots[slot] }
    }

    /// The state and table files of `encoded`: the table written new unless it has one.
    private static func files(of encoded: EncodedCheckpoint) -> (
        state: [UInt8], table: RequestTable, newTable: [UInt8]?
    ) {
        let parts = encoded.state
        var newTable: [UInt8]?
        let table: RequestTable
        if let current = encoded.table {
            table = current
        } else {
            let bytes = ServiceCheckpointFile.table(of: parts, slots: parts.slots)
            newTable = bytes
            table = RequestTable(
                file: "\(UUID().uuidString).requests", checksum: ServiceCheckpointFile.checksum(ofTable: bytes),
                slots: parts.slots)
        }
        let inTable = (0..<parts.encodings.count).map(table.holds)
        return (ServiceCheckpointFile.state(of: parts, inTable: inTable, table: table.checksum), table, newTable)
    }

    /// Writes an encoded state to the store, off the actor.
    func write(_ encoded: EncodedCheckpoint) async throws {
        let store = self.store
        let spacing = settings.retention.map { $0 / ServiceEngine.checkpointsPerRetention }
        let (written, forgetting) = await Task.detached {
            let written = Result {
                let files = Self.files(of: encoded)
                try store.saveCheckpoint(
                    files.state, table: ServiceStore.RequestTable(file: files.table.file, newBytes: files.newTable),
                    journalPosition: encoded.journalPosition, lastSeq: encoded.lastSeq, spacing: spacing)
                return (files.state.count + (files.newTable?.count ?? 0), files.table)
            }
            // Apart: the checkpoint is listed (and may have dropped a table) whether or not this fails.
            return (written, Result { try store.forgetAnswers(olderThan: 25 * 3600) })
        }.value
        if case .failure(let error) = forgetting {
            logger.error("could not forget old idempotency answers", metadata: ["error": "\(error)"])
        }
        let now = ContinuousClock.now
        lastCheckpoint = (now, now - encoded.started)
        let bytes: Int
        switch written {
        case .success(let (count, table)):
            bytes = count
            // Later checkpoints of this engine use that table (another engine has other slots).
            if encoded.engine == reloads { requestTable = table }
        case .failure(let error):
            // The next chance writes one again, with a new table if this one's was gone.
            if error is ServiceStore.TableNotListed { requestTable = nil }
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
