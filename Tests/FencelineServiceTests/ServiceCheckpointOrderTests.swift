import Fenceline
import FencelineFormats
import Foundation
import GRDB
import Logging
import TestSupport
import Testing

@testable import FencelineService

extension ServiceEngine {
    /// The engine's own checkpoint now (for comparing one engine with another).
    fileprivate func engineCheckpoint() -> [UInt8] { engine.checkpoint() }
}

/// Checkpoints asked for (`checkpoint()`, as SIGTERM and the prune do) while batches are applied
/// and background checkpoints are written: they are written one at a time, listed in journal
/// order (the last covers the whole journal), every file a listed checkpoint needs is on disk,
/// and the store reopens to the same engine. (Writes listed out of order could drop the request table the newest one needs.)
@Suite struct ServiceCheckpointOrderTests {
    static func open(_ directory: String, catalog: [UInt8]) throws -> ServiceEngine {
        var settings = ServiceEngine.Settings()
        settings.checkpointEvery = 50
        return try ServiceEngine.opened(directory, catalog: catalog, settings: settings, label: "checkpoint-order")
    }

    /// Three rounds: the interleavings differ from one to the next.
    @Test func checkpointsAskedForDuringIngestAreListedInOrder() async throws {
        for _ in 0..<3 { try await Self.round() }
    }

    static func round() async throws {
        let scenario = Fixtures.packageRoot.appendingPathComponent("Data/scenarios/ble-receivers-real")
        let catalog = Array(try Data(contentsOf: scenario.appendingPathComponent("triggers.json")))
        let lines = try String(contentsOf: scenario.appendingPathComponent("readings.ndjson"), encoding: .utf8)
            .split(separator: "\n")
        let directory = Scratch.root.appendingPathComponent("order-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = try open(directory.path, catalog: catalog)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for start in stride(from: 0, to: lines.count, by: 10) {
                    let batch = lines[start..<min(start + 10, lines.count)].joined(separator: "\n")
                    _ = try await engine.ingest(Array(batch.utf8), idempotencyKey: nil)
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<20 {
                        try await engine.checkpoint()
                        try await Task.sleep(for: .milliseconds(Int.random(in: 0...5)))
                    }
                }
            }
            try await group.waitForAll()
        }
        try await engine.checkpoint()

        let store = try ServiceStore(directory: directory.path)
        let rows = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT journalPosition, file, requests FROM checkpoints ORDER BY id")
        }
        let last = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT MAX(position) FROM journal") ?? 0
        }
        let positions = rows.map { $0["journalPosition"] as Int }
        // Older ones are dropped as newer ones are listed: what is left is the newest, covering
        // the whole journal (a write listed after a newer one would have left an older one).
        #expect(positions == positions.sorted(), "listed in journal order: \(positions)")
        #expect(positions.last == last, "the checkpoint listed last covers the journal: \(positions), \(last)")
        for row in rows {
            for name in [row["file"] as String?, row["requests"] as String?].compactMap({ $0 }) {
                #expect(
                    FileManager.default.fileExists(atPath: "\(store.checkpointDirectory)/\(name)"),
                    "\(name) is listed and on disk")
            }
        }
        let written = await engine.engineCheckpoint()
        let reopened = try open(directory.path, catalog: catalog)
        #expect(await reopened.engineCheckpoint() == written)
    }
}
