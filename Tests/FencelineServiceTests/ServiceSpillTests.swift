import Fenceline
import Foundation
import TestSupport
import Testing

@testable import FencelineService

/// A clock move made through the API (a wall-clock tick, a control record) while a batch awaits
/// its commit: the timers it fires are enough to spill (over a thousand events), and every one of
/// them reaches the log, with no gap in `seq`. The batch's spill is its own while its lines are
/// applied and no longer.
@Suite struct ServiceSpillTests {
    @Test func aTickDuringABatchsCommitLogsEveryTimer() async throws {
        let timers = 1500
        let requests = (0..<timers).map { #"{"id":"t\#($0)","trigger":{"type":"timeInterval","seconds":60}}"# }
        let catalog = Array(#"{"requests":[\#(requests.joined(separator: ","))]}"#.utf8)
        for round in 0..<4 {
            let directory = Scratch.root.appendingPathComponent("spill-\(round)-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let engine = try ServiceEngine.opened(directory.path, catalog: catalog, label: "spill")
            let first = #"{"device":"d","time":"2026-03-02T08:00:00Z","lat":52.37,"lon":4.89}"#
            _ = try await engine.ingest(Array(first.utf8), idempotencyKey: nil)
            // The batch is applied and awaits its commit; the tick, queued behind it, runs then.
            async let batch = engine.ingest(
                Array(#"{"device":"d","time":"2026-03-02T08:00:01Z","lat":52.37,"lon":4.89}"#.utf8),
                idempotencyKey: nil)
            async let tick: Void = engine.control(Array(#"{"time":"2026-03-02T08:05:00Z","op":"tick"}"#.utf8))
            _ = try await (batch, tick)
            let logged = try await engine.store.events(after: 0, limit: 10_000)
            #expect(logged.count == timers, "round \(round): \(logged.count) of \(timers) fire events logged")
            #expect(logged.map(\.seq) == Array(1...logged.count), "round \(round): seq has no gap")
        }
    }
}
