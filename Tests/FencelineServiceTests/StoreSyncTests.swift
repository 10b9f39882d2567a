import Foundation
import Testing

@testable import FencelineService

/// A 200 promises the batch is on disk: the writer syncs every commit. GRDB turns the WAL on
/// with `synchronous = NORMAL` (a sync only at checkpoints), after the configuration's own
/// set-up, so the store sets FULL once the pool is open; a new or reopened store must have it.
@Suite struct StoreSyncTests {
    @Test func theWriterSyncsEveryCommit() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(try ServiceStore(directory: directory.path).writerSynchronous() == 2)
        let reopened = try ServiceStore(directory: directory.path)
        try reopened.commit(lines: [Array(#"{"op":"tick","time":1}"#.utf8)], events: [], idempotency: nil)
        #expect(try reopened.writerSynchronous() == 2)
    }
}
