import Fenceline
import FencelineFormats
import Foundation
import Logging
import TestSupport
import Testing

@testable import FencelineService

/// SPEC §12 device proximity in the service: the real two-car scenario posted in batches, with a
/// restart from a checkpoint half way, logs exactly the events `fenceline run` records, and a
/// device's standings name the pairs it is in.
@Suite struct ServiceProximityTests {
    @Test func theTwoCarsThroughIngestMatchTheRecordedRun() async throws {
        let scenario = Fixtures.packageRoot.appendingPathComponent("Data/scenarios/proximity-real-drives")
        let catalog = Array(try Data(contentsOf: scenario.appendingPathComponent("triggers.json")))
        let lines = try String(contentsOf: scenario.appendingPathComponent("readings.ndjson"), encoding: .utf8)
            .split(separator: "\n")
        let expected = try String(contentsOf: scenario.appendingPathComponent("expected.ndjson"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let directory = Scratch.root.appendingPathComponent("proximity-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = ServiceEngine.Settings()
        settings.checkpointEvery = 50
        func open() throws -> ServiceEngine {
            try ServiceEngine.opened(directory.path, catalog: catalog, settings: settings, label: "proximity")
        }
        var engine = try open()
        var sawPair = false
        for (index, start) in stride(from: 0, to: lines.count, by: 25).enumerated() {
            if index == 4 {
                // A restart mid-drive: the pairs, their timers and the cars' last fixes come back.
                try await engine.checkpoint()
                engine = try open()
            }
            let batch = lines[start..<min(start + 25, lines.count)].joined(separator: "\n")
            let answer = try await engine.ingest(Array(batch.utf8), idempotencyKey: nil).answer
            #expect(answer.errors.isEmpty)
            let standings = await engine.status(ofDevice: "car-a")?.standings ?? []
            if standings.contains(where: { $0.requestID == "meet" && $0.isInside && $0.other == "car-b" }) {
                sawPair = true
            }
        }
        try await engine.checkpoint()
        #expect(sawPair)
        // The run's end (--until the last reading) fires timers due then; the service's clock
        // has not passed them, so its log is the recorded output up to the last reading's time.
        let logged = try ServiceStore(directory: directory.path).events(after: 0, limit: 1000)
            .map { String(decoding: $0.json, as: UTF8.self) }
        #expect(logged.count >= 20)
        #expect(logged == Array(expected.prefix(logged.count)))
    }
}
