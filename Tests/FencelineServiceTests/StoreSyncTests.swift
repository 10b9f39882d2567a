import Foundation
import GRDB
import TestSupport
import Testing

@testable import FencelineService

/// A 200 promises the batch is on disk: the writer syncs every commit. GRDB turns the WAL on
/// with `synchronous = NORMAL` (a sync only at checkpoints), after the configuration's own
/// set-up, so the store sets FULL once the pool is open; a new or reopened store must have it.
@Suite struct StoreSyncTests {
    /// The writer's `PRAGMA synchronous` (2 is FULL: every commit synced).
    static func writerSynchronous(_ store: ServiceStore) throws -> Int {
        try store.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    @Test func theWriterSyncsEveryCommit() throws {
        let directory = Scratch.root.appendingPathComponent("sync-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try Self.writerSynchronous(ServiceStore(directory: directory.path)) == 2)
        let reopened = try ServiceStore(directory: directory.path)
        try reopened.commit(lines: [Array(#"{"op":"tick","time":1}"#.utf8)], events: [], idempotency: nil)
        #expect(try Self.writerSynchronous(reopened) == 2)
    }
}
