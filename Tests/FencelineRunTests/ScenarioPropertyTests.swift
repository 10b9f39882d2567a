import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Logging
import TestSupport
import Testing

/// Properties the key scenarios must show by SPEC.md, independent of their recorded goldens.
@Suite struct ScenarioPropertyTests {
    static func events(_ scenario: String, reorderWindow: Double = 0) throws -> [(
        request: String, kind: String, time: String
    )] {
        let folder = Fixtures.dataDirectory.appendingPathComponent("scenarios/\(scenario)")
        let decoder = CatalogDecoder()
        let catalog = try decoder.decode(Array(try Data(contentsOf: folder.appendingPathComponent("triggers.json"))))
            .catalog
        var options = RunPipeline.Options()
        options.reorderWindow = TimeSpan(seconds: reorderWindow)
        let pipeline = RunPipeline(
            catalog: catalog, catalogDecoder: decoder, options: options, encoder: NDJSONEventEncoder(),
            logger: Logger(label: "test"))
        let readings = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix("readings.")
        }
        var output: [UInt8] = []
        _ = try pipeline.run(
            inputs: readings.map { folder.appendingPathComponent($0).path }, write: { output += $0 }, report: { _ in })
        return try String(decoding: output, as: UTF8.self).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return (object["request"] as! String, object["event"] as! String, object["time"] as! String)
        }
    }

    @Test func jitterFlapsWithNaiveButNotWithTheDefaultPreset() throws {
        let events = try Self.events("jitter-at-edge")
        let naive = events.filter { $0.request == "edge-naive" }.map(\.kind)
        let robust = events.filter { $0.request == "edge-default" }.map(\.kind)
        #expect(naive.count >= 20)
        #expect(robust == ["enter", "exit"])
    }

    @Test func fastVehicleCrossesTheGantryOnceAndEntersTheRestArea() throws {
        let events = try Self.events("fast-vehicle-cross")
        #expect(events.filter { $0.kind == "cross" }.map(\.request).sorted() == ["toll-gantry", "toll-gantry-planar"])
        #expect(events.filter { $0.request == "rest-area" }.map(\.kind) == ["enter", "exit"])
        #expect(!events.contains { $0.request == "farm" })
    }

    @Test func shipAcrossTheDateLineEntersAndExitsEachFenceOnce() throws {
        let events = try Self.events("antimeridian")
        for fence in ["dateline-box", "split-island"] {
            #expect(events.filter { $0.request == fence }.map(\.kind) == ["enter", "exit"])
        }
    }

    @Test func realDriveLeavesHomeStopsAtTheGroveAndComesBack() throws {
        let events = try Self.events("real-drive-visnjan")
        #expect(events.filter { $0.request == "home" }.map(\.kind) == ["exit", "enter"])
        #expect(events.filter { $0.request == "olive-grove" }.map(\.kind) == ["enter", "dwell", "exit"])
        #expect(events.filter { $0.request == "wayside-shrine" }.map(\.kind) == ["cross"])
    }

    @Test func smoothingCutsTheFlapsOfRealBLECapturesSeveralFold() throws {
        let events = try Self.events("ble-receivers-real")
        let raw = events.filter { $0.request == "raw" }.count
        let smoothed = events.filter { $0.request == "smoothed" }.count
        // The camera ground truth has 4 real passes; smoothing cannot beat reality, but must cut
        // the flapping of single noisy readings by a wide margin.
        #expect(smoothed >= 4)
        #expect(raw > 5 * smoothed)
    }

    @Test func armaConvergesInDoublePrecision() throws {
        let folder = Fixtures.dataDirectory.appendingPathComponent("scenarios/beacon-arma-precision")
        let expected = try String(contentsOf: folder.appendingPathComponent("expected.ndjson"), encoding: .utf8)
        // −60 + 10·0.9¹⁰ = −56.513…, written to a tenth of a dBm.
        #expect(expected.contains(#""rssi":-56.5,"#))
    }

    @Test func reorderedInputMatchesTheSortedOne() throws {
        let events = try Self.events("reorder-window", reorderWindow: 3)
        #expect(events.map(\.kind) == ["enter", "exit", "enter", "exit"])
        #expect(events.map(\.time) == (1...4).map { "2026-03-02T08:00:0\($0)Z" })
    }
}
