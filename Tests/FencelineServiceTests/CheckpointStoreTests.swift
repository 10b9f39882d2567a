import Fenceline
import Foundation
import GRDB
import TestSupport
import Testing

@testable import FencelineService

/// Checkpoint states live in files of `DIR/checkpoints`, listed in the store: the newest is read
/// back, dropped ones lose their files, a crash's leftovers are deleted on the next open, and a
/// state kept in the table by an older store still reads.
@Suite struct CheckpointStoreTests {
    static func directory() -> String {
        Scratch.root.appendingPathComponent("checkpoints-\(UUID().uuidString)").path
    }

    static func files(in store: ServiceStore) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store.checkpointDirectory).sorted()
    }

    @Test func statesAreFilesAndOnlyTheKeptOnesStay() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try ServiceStore(directory: directory)
        #expect(try store.latestCheckpoint() == nil)
        for position in 1...3 {
            try store.saveCheckpoint(
                Array(repeating: UInt8(position), count: 1000), journalPosition: position, lastSeq: 0)
        }
        let latest = try #require(try store.latestCheckpoint())
        #expect(latest.journalPosition == 3)
        #expect(latest.state == Array(repeating: 3, count: 1000))
        #expect(try Self.files(in: store).count == 1, "the older two were dropped with their files")
        let stored = try store.pool.read { db in try Data.fetchOne(db, sql: "SELECT state FROM checkpoints") }
        #expect(stored?.isEmpty == true, "the table keeps the file's name, not the state")
    }

    @Test func aCrashsLeftoversAreDeletedOnTheNextOpen() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var store = try ServiceStore(directory: directory)
        try store.saveCheckpoint([1, 2, 3], journalPosition: 7, lastSeq: 0)
        let kept = try Self.files(in: store)
        // Killed after writing a state but before listing it, and while writing another.
        for name in ["0F0F0F0F-0000-0000-0000-000000000000.ckpt", ".x.ckpt.123.tmp"] {
            #expect(FileManager.default.createFile(atPath: "\(store.checkpointDirectory)/\(name)", contents: Data([9])))
        }
        store = try ServiceStore(directory: directory)
        #expect(try Self.files(in: store) == kept)
        #expect(try store.latestCheckpoint()?.state == [1, 2, 3])
    }

    @Test func aStateKeptInTheTableStillReads() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try ServiceStore(directory: directory)
        try store.pool.write { db in
            try db.execute(
                sql: "INSERT INTO checkpoints (journalPosition, state, created, lastSeq) VALUES (5, ?, 0, 0)",
                arguments: [Data([4, 5, 6])])
        }
        #expect(try store.latestCheckpoint()?.state == [4, 5, 6])
        try store.saveCheckpoint([7], journalPosition: 6, lastSeq: 0)
        #expect(try store.latestCheckpoint()?.state == [7])
        #expect(try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM checkpoints") } == 1)
    }
}
