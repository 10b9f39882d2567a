import Fenceline
import FencelineFormats
import FencelineRender
import FencelineRun
import Foundation
import Logging
import TestSupport
import Testing

/// `explain`'s trace: it changes nothing, it sees exactly the events the run writes, and its
/// diagnosis answers "why no exit?".
@Suite struct ExplainTests {
    /// Collects every event written, with its sequence number.
    final class Collector: EventEncoder {
        var events: [Event] = []
        func encode(_ event: Event, into bytes: inout [UInt8]) {
            events.append(event)
            NDJSONEventEncoder().encode(event, into: &bytes)
        }
    }

    struct Traced {
        var output: [UInt8]
        var events: [Event]
        var tracer: RegionTracer?
    }

    func run(catalog: Catalog, inputs: [String], tracing pair: (device: String, request: String)?) throws -> Traced {
        let collector = Collector()
        let pipeline = RunPipeline(
            catalog: catalog, catalogDecoder: CatalogDecoder(), options: RunPipeline.Options(), encoder: collector,
            logger: Logger(label: "test"))
        let tracer = pair.map { RegionTracer(device: $0.device, request: $0.request) }
        pipeline.tracer = tracer
        var output: [UInt8] = []
        _ = try pipeline.run(inputs: inputs, write: { output += $0 }, report: { _ in })
        return Traced(output: output, events: collector.events, tracer: tracer)
    }

    /// Every bundled scenario without extra arguments, every device and region or proximity request: the run
    /// with a tracer writes the same bytes, and the trace's events are the pair's events.
    @Test func traceSeesEveryEventOfThePairAndChangesNothing() throws {
        let root = Fixtures.dataDirectory.appendingPathComponent("scenarios")
        var pairs = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() {
            let folder = root.appendingPathComponent(name)
            let readings = folder.appendingPathComponent("readings.ndjson").path
            guard FileManager.default.fileExists(atPath: readings),
                !FileManager.default.fileExists(atPath: folder.appendingPathComponent("args.json").path)
            else { continue }
            let catalog = try CatalogDecoder().decode(
                Array(try Data(contentsOf: folder.appendingPathComponent("triggers.json")))
            )
            .catalog
            let plain = try run(catalog: catalog, inputs: [readings], tracing: nil)
            var devices = Set<String>()
            try ReadingSource(path: readings).forEach { item in
                if case .success(.fix(let fix)) = item { devices.insert(fix.device) }
                return true
            }
            // A scenario of thousands of devices would be run once per device: a few are enough
            // (each run of the 10,000-device proximity scenario takes 1.5 s in a debug build).
            for device in devices.sorted().prefix(8) {
                for request in catalog.requests {
                    switch request.trigger {
                    case .region, .proximity: break
                    default: continue
                    }
                    let traced = try run(catalog: catalog, inputs: [readings], tracing: (device, request.id))
                    #expect(
                        traced.output == plain.output, "\(name): tracing \(device)/\(request.id) changed the output")
                    // A proximity pair's events are the traced device's whichever side of the pair it is.
                    let expected = plain.events.filter {
                        ($0.device == device || $0.other == device) && $0.requestID == request.id
                    }
                    let seen = traced.tracer!.steps.flatMap(\.events) + traced.tracer!.pairSteps.flatMap(\.events)
                    // The same events; those of one instant leave in SPEC §4 order, not production order.
                    #expect(
                        seen.map { "\($0.time.rfc3339) \($0.kind.rank) \($0.kind)" }.sorted()
                            == expected.map { "\($0.time.rfc3339) \($0.kind.rank) \($0.kind)" },
                        "\(name): \(device)/\(request.id)")
                    pairs += 1
                }
            }
        }
        #expect(pairs > 30)
    }

    func report(
        _ lines: [String], hysteresis: Hysteresis = .default, configure: (inout RegionTrigger) -> Void = { _ in }
    ) throws -> String {
        let request = Fixtures.circle("office", hysteresis: hysteresis, configure: configure)
        let directory = Scratch.root.appendingPathComponent("explain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("trace.ndjson").path
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let traced = try run(catalog: Catalog(requests: [request]), inputs: [path], tracing: ("d1", "office"))
        return ExplainReport.render(
            request: request, tracer: traced.tracer!, written: traced.events, everyFix: true)
    }

    func line(_ seconds: Int, east: Double) -> String {
        let point = Fixtures.offset(east: east)
        return
            #"{"device":"d1","time":\#(Int(Fixtures.t0.seconds) + seconds),"lat":\#(point.latitude),"lon":\#(point.longitude)}"#
    }

    /// A device that wanders out only into the band never exits: the diagnosis names the exit
    /// condition and the farthest fix.
    @Test func hoveringInTheBandExplainsTheMissingExit() throws {
        let radius = 100.0
        let text = try report([
            line(0, east: 200), line(10, east: 0), line(20, east: radius + 12), line(30, east: radius + 5),
        ])
        #expect(text.contains("→ #1 enter notified"))
        #expect(text.contains("At the end the device is inside"))
        #expect(text.contains("No fix since then met the exit condition (s > +20 m): the farthest out was s = +12 m"))
    }

    /// An exit streak still waiting for its delay when the input ends is named as such.
    @Test func anOpenStreakAtTheEndIsNamed() throws {
        let radius = 100.0
        let text = try report([line(0, east: 200), line(10, east: 0), line(20, east: radius + 40)])
        #expect(text.contains("exit streak since"))
        #expect(text.contains("was still open when the input ended"))
    }

    /// A dwell timer whose visit exited first is dead: no "dwell due" row; a live one has its row.
    @Test func aDwellTimerOfAnEndedVisitIsNotListed() throws {
        let dwell: (inout RegionTrigger) -> Void = {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 60)
        }
        let exited = try report(
            [line(0, east: 200), line(10, east: 0), line(40, east: 300), line(100, east: 300)], hysteresis: .naive,
            configure: dwell)
        #expect(exited.contains("→ #2 exit notified"))
        #expect(!exited.contains("dwell due"))
        let stayed = try report(
            [line(0, east: 200), line(10, east: 0), line(40, east: 0), line(100, east: 0)], hysteresis: .naive,
            configure: dwell)
        #expect(stayed.contains("dwell due"))
        #expect(stayed.contains("→ #2 dwell notified"))
    }

    /// Streaks cut by band fixes are counted.
    @Test func cutStreaksAreCounted() throws {
        let radius = 100.0
        let text = try report([
            line(0, east: 200), line(10, east: 0), line(20, east: radius + 30), line(25, east: radius + 10),
            line(30, east: radius + 30), line(35, east: 0),
        ])
        #expect(text.contains("cuts the exit streak"))
        #expect(text.contains("every exit streak was cut (2 times)"))
    }
}
