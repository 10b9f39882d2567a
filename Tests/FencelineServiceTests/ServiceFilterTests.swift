import Fenceline
import FencelineFormats
import Foundation
import Logging
import TestSupport
import Testing

@testable import FencelineService

/// SPEC §12 position filters in the service: the filters scenario posted in batches gives the
/// events one engine gives, the 2099 line is answered as a bad line naming `future time`, and a
/// restart (the store's journal replayed) keeps the filters' references.
@Suite struct ServiceFilterTests {
    @Test func theFiltersScenarioThroughIngestMatchesOneEngine() async throws {
        let scenario = Fixtures.packageRoot.appendingPathComponent("Data/scenarios/filters-real-drive")
        let catalog = Array(try Data(contentsOf: scenario.appendingPathComponent("triggers.json")))
        let lines = try String(contentsOf: scenario.appendingPathComponent("readings.ndjson"), encoding: .utf8)
            .split(separator: "\n")
        let directory = Scratch.root.appendingPathComponent("filters-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A checkpoint every 30 lines: the restart loads one and replays the journal after it.
        var settings = ServiceEngine.Settings()
        settings.checkpointEvery = 30
        func open() throws -> ServiceEngine {
            try ServiceEngine.opened(directory.path, catalog: catalog, settings: settings, label: "filters")
        }
        var engine = try open()
        var errors: [String] = []
        for (index, start) in stride(from: 0, to: lines.count, by: 20).enumerated() {
            if index == 3 {
                // A restart mid-drive, as after SIGTERM: the filters' references come back from
                // the checkpoint it writes (and the journal after any earlier one).
                try await engine.checkpoint()
                engine = try open()
            }
            let batch = lines[start..<min(start + 20, lines.count)].joined(separator: "\n")
            let answer = try await engine.ingest(Array(batch.utf8), idempotencyKey: nil).answer
            errors += answer.errors.map { "\(start + $0.line): \($0.reason)" }
        }
        try await engine.checkpoint()
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("64: field \"time\": future time: 2462636436 s ahead") == true)
        // One engine over the same lines (the 2099 line refused as the CLI refuses it).
        let decoded = try CatalogDecoder().decode(catalog).catalog
        let reference = try Engine(catalog: decoded)
        let decoder = NDJSONReadingDecoder(
            requests: NDJSONReadingDecoder.RequestContext(decoder: CatalogDecoder(), catalog: decoded))
        var expected: [Event] = []
        for line in lines {
            let bytes = Array(line.utf8)
            guard
                let reading = try bytes.withUnsafeBufferPointer({ buffer throws(LineError) in try decoder.decode(buffer)
                }),
                reading.time.flatMap({ reference.futureRefusal(at: $0) }) == nil
            else { continue }
            expected += reference.process(reading)
        }
        let logged = try ServiceStore(directory: directory.path).events(after: 0, limit: 1000)
        let encoder = NDJSONEventEncoder()
        let expectedJSON = expected.map { event -> String in
            var bytes: [UInt8] = []
            encoder.encode(event, into: &bytes)
            return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        #expect(logged.map { String(decoding: $0.json, as: UTF8.self) } == expectedJSON)
        #expect(logged.count == 23)
    }

    @Test func removingADeviceExitsItsFencesAndForgetsIt() async throws {
        let catalog = Array(
            #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"hysteresis":"naive"}}]}"#
                .utf8)
        let directory = Scratch.root.appendingPathComponent("remove-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = try ServiceEngine.opened(directory.path, catalog: catalog, label: "remove")
        let lines = [
            #"{"device":"van","time":"2026-03-02T08:00:00Z","lat":52.37,"lon":4.895}"#,
            #"{"device":"van","time":"2026-03-02T08:00:10Z","lat":52.37,"lon":4.89}"#,
            #"{"device":"bus","time":"2026-03-02T08:00:15Z","lat":52.0,"lon":4.0}"#,
        ]
        _ = try await engine.ingest(Array(lines.joined(separator: "\n").utf8), idempotencyKey: nil)
        let line = Array(#"{"devices":["van"],"op":"removeDevice"}"#.utf8)
        #expect(try await engine.controlIfKnownDevice("van", line))
        #expect(try await !engine.controlIfKnownDevice("van", line))  // forgotten: a 404
        #expect(await engine.status(ofDevice: "van") == nil)
        // The exit leaves with its instant, at the next reading.
        _ = try await engine.ingest(
            Array(#"{"device":"bus","time":"2026-03-02T08:00:20Z","lat":52.0,"lon":4.0}"#.utf8), idempotencyKey: nil)
        // Written before the directory goes (a background write would find it gone).
        try await engine.checkpoint()
        let logged = try ServiceStore(directory: directory.path).events(after: 0, limit: 10).map {
            String(decoding: $0.json, as: UTF8.self)
        }
        #expect(logged.count == 2)
        #expect(
            logged.last?.contains(#""event":"exit","since":"2026-03-02T08:00:15Z","reason":"removed""#) == true,
            "\(logged)")
    }
}
