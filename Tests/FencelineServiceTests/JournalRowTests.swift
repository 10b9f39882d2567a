import Fenceline
import Foundation
import TestSupport
import Testing

@testable import FencelineService

/// The journal keeps a batch's lines in one row, joined by newlines; stores written before that
/// hold one line a row. Both read back as the same lines, and the export (each row and a
/// newline) is the same text.
@Suite struct JournalRowTests {
    @Test func batchesAndSingleLinesReadBackAsTheirLines() throws {
        let directory = Scratch.root.appendingPathComponent("journal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try ServiceStore(directory: directory.path)
        let lines = (1...7).map { Array(#"{"device":"d","time":"2026-01-01T00:00:0\#($0)Z","lat":1,"lon":2}"#.utf8) }
        // One line a row, as older stores wrote them, then a batch of four, then a batch of none.
        try store.commit(lines: [lines[0]], events: [], idempotency: nil)
        try store.commit(lines: [lines[1]], events: [], idempotency: nil)
        try store.commit(lines: Array(lines[2..<6]), events: [], idempotency: nil)
        let last = try store.commit(lines: [], events: [], idempotency: nil)
        #expect(last == 3)
        try store.commit(lines: [lines[6]], events: [], idempotency: nil)

        var read: [[UInt8]] = []
        let reached = try store.forEachJournalLine(after: 0) { read.append(Array($0)) }
        #expect(read == lines)
        #expect(reached == 4)
        var later: [[UInt8]] = []
        _ = try store.forEachJournalLine(after: 2) { later.append(Array($0)) }
        #expect(later == Array(lines[2...]))

        let snapshot = try store.snapshot()
        let rows = try ServiceStore.journal(in: snapshot, after: 0, limit: 100)
        let export: [UInt8] = rows.flatMap { $0.line + [0x0A] }
        #expect(export == lines.flatMap { $0 + [UInt8(0x0A)] })
    }
}
