import Fenceline
import Foundation
import GRDB
import TestSupport
import Testing

@testable import FencelineService

/// The service's checkpoints keep their request encodings in a table file shared by the
/// checkpoints that follow: a state file and its table put together are byte for byte the
/// engine's own checkpoint, damage is refused, and a table stays exactly as long as a listed
/// checkpoint uses it.
@Suite struct RequestTableTests {
    /// An engine with requests added, replaced and removed after its start, and a few readings.
    static func engine() throws -> Engine {
        let engine = try Engine(
            catalog: Catalog(requests: (0..<20).map { Fixtures.circle("r\($0)", radius: 50 + Double($0)) }))
        engine.keepsCheckpointEncodings = true
        for step in 0..<30 {
            _ = engine.process(Fixtures.fix("d\(step % 3)", Double(step * 5), east: Double(step * 20 - 200)))
        }
        try engine.add(Fixtures.circle("late", radius: 70))
        try engine.add(Fixtures.circle("r3", radius: 10))  // replaces r3: a new slot, the old one dead
        engine.removePendingRequests(withIdentifiers: ["r7"])
        return engine
    }

    @Test func aStateAndItsTableAreTheEnginesCheckpoint() throws {
        let engine = try Self.engine()
        let parts = engine.checkpointParts()
        let whole = parts.assembled()
        // Every live request in the table, then only some (the others written into the state).
        for tabled in [parts.slots, Array(parts.slots.prefix(10))] {
            let table = ServiceCheckpointFile.table(of: parts, slots: tabled)
            var inTable = [Bool](repeating: false, count: parts.encodings.count)
            for slot in tabled { inTable[slot] = true }
            let state = ServiceCheckpointFile.state(
                of: parts, inTable: inTable, table: ServiceCheckpointFile.checksum(ofTable: table))
            #expect(try ServiceCheckpointFile.assembled(state: state, table: table) == whole)
            // The state holds no encoding the table has: only a slot number and a flag instead.
            let tabledBytes = tabled.reduce(0) { $0 + parts.encodings[$1].count }
            #expect(state.count <= whole.count - tabledBytes + parts.slots.count * 32 + 128)
        }
        // The resumed engine writes that checkpoint again.
        let resumed = try Engine(resuming: whole)
        #expect(resumed.checkpoint() == whole)
    }

    @Test func damageAndAnotherTableAreRefused() throws {
        let parts = try Self.engine().checkpointParts()
        let table = ServiceCheckpointFile.table(of: parts, slots: parts.slots)
        var inTable = [Bool](repeating: false, count: parts.encodings.count)
        for slot in parts.slots { inTable[slot] = true }
        let state = ServiceCheckpointFile.state(
            of: parts, inTable: inTable, table: ServiceCheckpointFile.checksum(ofTable: table))
        for index in stride(from: 0, to: state.count, by: max(1, state.count / 40)) {
            var damaged = state
            damaged[index] ^= 0x20
            #expect(throws: ServiceCheckpointFile.Damaged.self) {
                try ServiceCheckpointFile.assembled(state: damaged, table: table)
            }
        }
        #expect(throws: ServiceCheckpointFile.Damaged.self) {
            try ServiceCheckpointFile.assembled(state: Array(state.dropLast(3)), table: table)
        }
        let other = ServiceCheckpointFile.table(of: parts, slots: Array(parts.slots.dropFirst()))
        #expect(throws: ServiceCheckpointFile.Damaged.self) {
            try ServiceCheckpointFile.assembled(state: state, table: other)
        }
    }

    @Test func aTableStaysWhileACheckpointUsesIt() throws {
        let directory = CheckpointStoreTests.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var store = try ServiceStore(directory: directory)
        let parts = try Self.engine().checkpointParts()
        let whole = parts.assembled()
        func save(_ table: String, new: Bool, position: Int) throws {
            let bytes = ServiceCheckpointFile.table(of: parts, slots: parts.slots)
            var inTable = [Bool](repeating: false, count: parts.encodings.count)
            for slot in parts.slots { inTable[slot] = true }
            let state = ServiceCheckpointFile.state(
                of: parts, inTable: inTable, table: ServiceCheckpointFile.checksum(ofTable: bytes))
            try store.saveCheckpoint(
                state, table: ServiceStore.RequestTable(file: table, newBytes: new ? bytes : nil),
                journalPosition: position, lastSeq: 0)
        }
        try save("A.requests", new: true, position: 1)
        try save("A.requests", new: false, position: 2)
        #expect(try CheckpointStoreTests.files(in: store).filter { $0.hasSuffix(".requests") } == ["A.requests"])
        #expect(try store.latestCheckpoint()?.state == whole)
        // A new table: the old one goes with the last checkpoint that used it.
        try save("B.requests", new: true, position: 3)
        #expect(try CheckpointStoreTests.files(in: store).filter { $0.hasSuffix(".requests") } == ["B.requests"])
        #expect(try CheckpointStoreTests.files(in: store).count == 2)
        // A checkpoint cannot name a kept table that no listed checkpoint uses any more.
        #expect(throws: ServiceStore.TableNotListed.self) { try save("A.requests", new: false, position: 4) }
        #expect(try store.latestCheckpoint()?.journalPosition == 3)
        // A table written by a checkpoint a crash kept from being listed is deleted on the next open.
        #expect(FileManager.default.createFile(atPath: "\(store.checkpointDirectory)/C.requests", contents: Data([1])))
        store = try ServiceStore(directory: directory)
        #expect(try CheckpointStoreTests.files(in: store).filter { $0.hasSuffix(".requests") } == ["B.requests"])
        let latest = try #require(try store.latestCheckpoint())
        #expect(latest.state == whole)
        #expect(latest.journalPosition == 3)
    }
}
