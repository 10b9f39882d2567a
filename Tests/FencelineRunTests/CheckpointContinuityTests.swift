import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Logging
import TestSupport
import Testing

/// SPEC §10 continuity: an input cut between readings of different times, run part by part with
/// `--checkpoint` and `--resume`, writes exactly what one run over the whole input writes.
@Suite struct CheckpointContinuityTests {
    /// What a run is given besides its input.
    struct Setup {
        var catalog: Catalog
        var until: Timestamp?
        var reorderWindow = TimeSpan.zero
        var deviceTTL: TimeSpan?
        var format = EventFormat.ndjson
        var threads = 1
    }

    /// The output of one run over `lines` cut before each of `cuts` (line indices): the first part
    /// starts from the catalog, each later one from the checkpoint the part before wrote.
    static func output(_ setup: Setup, lines: [String], cuts: [Int]) throws -> [UInt8] {
        let directory = Scratch.root.appendingPathComponent("cuts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bounds = [0] + cuts + [lines.count]
        var output: [UInt8] = []
        var state: [UInt8]?
        for part in 0..<(bounds.count - 1) {
            let path = directory.appendingPathComponent("part-\(part).ndjson").path
            let text = lines[bounds[part]..<bounds[part + 1]].map { $0 + "\n" }.joined()
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let last = part == bounds.count - 2
            var options = RunPipeline.Options()
            options.until = last ? setup.until : nil
            options.reorderWindow = setup.reorderWindow
            options.deviceTTL = setup.deviceTTL
            options.threads = setup.threads
            let pipeline = RunPipeline(
                catalog: state == nil ? setup.catalog : Catalog(), catalogDecoder: CatalogDecoder(), options: options,
                encoder: setup.format.makeEncoder(), logger: Logger(label: "test"))
            pipeline.resumeState = state
            pipeline.checkpointing = !last
            _ = try pipeline.run(inputs: [path], write: { output += $0 }, report: { _ in })
            if !last {
                guard let written = pipeline.lastCheckpoint else {
                    Issue.record("part \(part) wrote no checkpoint")
                    return output
                }
                state = written
                // What is written is what is read: a checkpoint survives a round trip unchanged.
                let again = try Engine(
                    resuming: state!,
                    configuration: Engine.Configuration(reorderWindow: setup.reorderWindow, deviceTTL: setup.deviceTTL))
                #expect(again.checkpoint() == state!, "a resumed engine's checkpoint differs from the one it read")
            }
        }
        return output
    }

    /// The indices where an input may be cut: every timed line before is older than every timed
    /// line after (lines without a readable time constrain nothing).
    static func cutPositions(_ lines: [String]) -> [Int] {
        let times: [Int64?] = lines.map { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            if let text = object["time"] as? String { return Timestamp(rfc3339: text)?.microseconds }
            if let number = object["time"] as? Double { return Timestamp(seconds: number).microseconds }
            return nil
        }
        var latestBefore = [Int64](repeating: .min, count: lines.count + 1)
        for index in lines.indices { latestBefore[index + 1] = max(latestBefore[index], times[index] ?? .min) }
        var earliestAfter = [Int64](repeating: .max, count: lines.count + 1)
        for index in lines.indices.reversed() {
            earliestAfter[index] = min(earliestAfter[index + 1], times[index] ?? .max)
        }
        return (1..<max(1, lines.count)).filter { latestBefore[$0] < earliestAfter[$0] }
    }

    /// Up to `count` distinct cut positions, sorted, drawn with `generator`.
    static func cuts(from positions: [Int], count: Int, using generator: inout SplitMix) -> [Int] {
        guard !positions.isEmpty else { return [] }
        let wanted = Int.random(in: 1...count, using: &generator)
        return Array(Set((0..<wanted).map { _ in positions.randomElement(using: &generator)! })).sorted()
    }

    /// Every bundled NDJSON scenario, with its own arguments, cut at random places (six seeds, up
    /// to five cuts each), and with `--threads 2` for the uncut run.
    @Test(
        arguments: try! FileManager.default.contentsOfDirectory(
            atPath: Fixtures.dataDirectory.appendingPathComponent("scenarios").path
        ).filter { !$0.hasSuffix(".md") }.sorted())
    func bundledScenarioCutAnywhereGivesTheSameOutput(scenario: String) throws {
        let folder = Fixtures.dataDirectory.appendingPathComponent("scenarios/\(scenario)")
        let readings = folder.appendingPathComponent("readings.ndjson")
        guard FileManager.default.fileExists(atPath: readings.path) else { return }  // CSV: a header per part
        var setup = Setup(
            catalog: try CatalogDecoder().decode(
                Array(Data(contentsOf: folder.appendingPathComponent("triggers.json")))
            )
            .catalog)
        if let args = try? JSONSerialization.jsonObject(
            with: Data(contentsOf: folder.appendingPathComponent("args.json")))
            as? [String]
        {
            for (flag, value) in zip(args, args.dropFirst()) {
                switch flag {
                case "--until": setup.until = Timestamp(rfc3339: value)
                case "--reorder-window": setup.reorderWindow = TimeSpan(seconds: Double(value)!)
                case "--device-ttl": setup.deviceTTL = TimeSpan(seconds: Double(value)!)
                case "--format": setup.format = EventFormat(rawValue: value)!
                default: break
                }
            }
        }
        let lines = try String(contentsOf: readings, encoding: .utf8).split(separator: "\n").map(String.init)
        let whole = try Self.output(setup, lines: lines, cuts: [])
        #expect(whole == Array(try Data(contentsOf: folder.appendingPathComponent("expected.ndjson"))))
        let positions = Self.cutPositions(lines)
        var generator = SplitMix(state: UInt64(truncatingIfNeeded: DeviceHash.of(scenario)))
        for seed in 0..<6 {
            let cuts = Self.cuts(from: positions, count: 5, using: &generator)
            var threaded = setup
            threaded.threads = seed % 2 == 0 ? 1 : 2
            let cut = try Self.output(threaded, lines: lines, cuts: cuts)
            #expect(cut == whole, "\(scenario) cut at \(cuts)")
        }
    }

    /// Generated streams of several devices with every kind of trigger and state a cut can fall
    /// in: fixes with delays, dwell, minFixes, repeats: false, crossings and initial policies;
    /// beacon sightings with smoothing, enter delays, exit delays and timeouts; time and calendar
    /// triggers; control records; bad lines. With and without a reorder window.
    @Test(arguments: 0..<40)
    func generatedStreamCutAnywhereGivesTheSameOutput(seed: Int) throws {
        var generator = SplitMix(state: UInt64(seed) &* 0x9E37_79B9 &+ 11)
        let (catalog, lines) = try Self.generatedStream(using: &generator)
        var setup = Setup(catalog: catalog, until: Fixtures.at(Double(lines.count) * 3 + 600))
        if seed % 2 == 1 { setup.reorderWindow = TimeSpan(seconds: 4) }
        if seed % 4 == 2 { setup.threads = 2 }
        let whole = try Self.output(setup, lines: lines, cuts: [])
        #expect(String(decoding: whole, as: UTF8.self).split(separator: "\n").count > 20)
        let positions = Self.cutPositions(lines)
        for _ in 0..<3 {
            let cuts = Self.cuts(from: positions, count: 5, using: &generator)
            #expect(try Self.output(setup, lines: lines, cuts: cuts) == whole, "seed \(seed), cut at \(cuts)")
        }
    }

    static let catalogJSON = #"""
        {"categories":[{"id":"arrival","actions":[{"id":"ack","title":"OK"}]}],
         "requests":[
          {"id":"depot","content":{"title":"{device} {event} depot","category":"arrival","userInfo":{"site":4,"tags":["a",null,true]}},
           "trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":120,"notifyOnDwell":true,"dwell":40}},
          {"id":"yard","trigger":{"type":"region","geometry":{"type":"Polygon","coordinates":[[[4.893,52.371],[4.897,52.371],[4.897,52.374],[4.893,52.374],[4.893,52.371]]]},
           "repeats":false,"hysteresis":{"enterDelay":10,"exitDelay":10,"minFixes":2}}},
          {"id":"gate","trigger":{"type":"region","center":{"lat":52.368,"lon":4.886},"radius":40,"notifyOnCross":true,"initial":"enter","hysteresis":"naive"}},
          {"id":"zone","devices":["d0","d1","d2"],"trigger":{"type":"region","center":{"lat":52.372,"lon":4.888},"radius":200,"initial":"state",
           "hysteresis":{"accuracy":"conservative","maxAccuracy":60}}},
          {"id":"dock","trigger":{"type":"beacon","uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","proximity":"near","window":10,"exitTimeout":15}},
          {"id":"hall","trigger":{"type":"beacon","uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","major":1,"enterDelay":3,"exitDelay":5,"filter":"arma"}},
          {"id":"ping","content":{"title":"ping"},"trigger":{"type":"timeInterval","seconds":60,"repeats":true}},
          {"id":"half-minute","devices":["d1","d3"],"trigger":{"type":"calendar","dateComponents":{"second":30},"repeats":true},
           "schedule":{"timeZone":"UTC","windows":[{"days":["mon"],"start":"08:02","end":"08:06"}]}}
         ]}
        """#

    /// A catalog and a time-ordered stream (equal times allowed) of about 300 lines.
    static func generatedStream(using generator: inout SplitMix) throws -> (Catalog, [String]) {
        let catalog = try CatalogDecoder().decode(Array(catalogJSON.utf8)).catalog
        var positions = (0..<6).map { _ in
            (Double.random(in: -400...400, using: &generator), Double.random(in: -400...400, using: &generator))
        }
        var time = 0.0
        var lines: [String] = []
        let uuid = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"
        for _ in 0..<300 {
            time += [0, 0.5, 1, 2, 3, 5, 8].randomElement(using: &generator)!
            let stamp = Fixtures.at(time).rfc3339
            let device = Int.random(in: 0..<6, using: &generator)
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<60:
                positions[device].0 += Double.random(in: -60...60, using: &generator)
                positions[device].1 += Double.random(in: -60...60, using: &generator)
                positions[device].0 = max(-500, min(500, positions[device].0 * 0.97))
                positions[device].1 = max(-500, min(500, positions[device].1 * 0.97))
                let point = Fixtures.offset(east: positions[device].0, north: positions[device].1)
                let accuracy = Int.random(in: 3...80, using: &generator)
                lines.append(
                    #"{"device":"d\#(device)","time":"\#(stamp)","lat":\#(point.latitude),"lon":\#(point.longitude),"accuracy":\#(accuracy)}"#
                )
            case 60..<85:
                let rssi = Int.random(in: -90 ... -55, using: &generator)
                let minor = Int.random(in: 1...3, using: &generator)
                lines.append(
                    #"{"device":"d\#(device)","time":"\#(stamp)","beacon":{"uuid":"\#(uuid)","major":1,"minor":\#(minor),"rssi":\#(rssi)}}"#
                )
            case 85..<88:
                let radius = Int.random(in: 30...90, using: &generator)
                lines.append(
                    #"{"time":"\#(stamp)","op":"add","request":{"id":"gate","trigger":{"type":"region","center":{"lat":52.368,"lon":4.886},"radius":\#(radius),"notifyOnCross":true}}}"#
                )
            case 88..<90: lines.append(#"{"time":"\#(stamp)","op":"removeDelivered","ids":["depot"]}"#)
            case 90: lines.append(#"{"time":"\#(stamp)","op":"removePending","ids":["ping"]}"#)
            case 91:
                lines.append(
                    #"{"time":"\#(stamp)","op":"add","request":{"id":"ping","trigger":{"type":"timeInterval","seconds":90,"repeats":true}}}"#
                )
            case 92..<96: lines.append(#"{"time":"\#(stamp)","op":"tick"}"#)
            case 96: lines.append(#"{"device":"d\#(device)","time":"\#(stamp)","lat":95,"lon":4.89}"#)
            default: lines.append(#"{"op":"tick"}"#)
            }
        }
        return (catalog, lines)
    }

    /// A tick closes the instant at the clock as a checkpoint's end does: the timers due at the
    /// clock fire with it, so a run cut just before a bare tick writes what the uncut one does
    /// (a's exit, due at 20 s, and b's enter at 20 s leave together, exit first), with threads too.
    @Test func aCutBeforeABareTickGivesTheSameOutput() throws {
        let catalog = try CatalogDecoder().decode(
            Array(
                #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"hysteresis":{"preset":"naive","exitDelay":10}}}]}"#
                    .utf8)
        ).catalog
        let lines = [
            #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":52.37,"lon":4.89}"#,
            #"{"device":"b","time":"2026-03-02T08:00:00Z","lat":52.372,"lon":4.89}"#,
            #"{"device":"a","time":"2026-03-02T08:00:10Z","lat":52.372,"lon":4.89}"#,
            #"{"device":"b","time":"2026-03-02T08:00:20Z","lat":52.37,"lon":4.89}"#,
            #"{"op":"tick"}"#,
            #"{"device":"c","time":"2026-03-02T08:00:30Z","lat":52.372,"lon":4.89}"#,
        ]
        let setup = Setup(catalog: catalog, until: nil)
        let whole = try Self.output(setup, lines: lines, cuts: [])
        let events = String(decoding: whole, as: UTF8.self).split(separator: "\n")
        #expect(events.count == 2 && events[0].contains(#""device":"a""#) && events[0].contains(#""event":"exit""#))
        #expect(try Self.output(setup, lines: lines, cuts: [4]) == whole)
        var threaded = setup
        threaded.threads = 2
        #expect(try Self.output(threaded, lines: lines, cuts: []) == whole)
    }

    /// A forced exit (removeDevice, expiry, time to live) reports the device's last fix, wherever
    /// the input is cut: fixes inside a settled disc skip the records, and a resumed engine has
    /// no disc, so the records' own last position differed with the cut (found by an audit).
    /// With `coarse`, a last fix over the request's maxAccuracy follows, which steps no record:
    /// the fix the disc skipped before it is still the records' last.
    @Test(arguments: ["removeDevice", "expires", "ttl", "coarse"])
    func aForcedExitReportsTheLastFixWhereverTheInputIsCut(force: String) throws {
        let expires = force == "expires" ? #","expires":"2026-03-02T08:00:50Z""# : ""
        let catalog = try CatalogDecoder().decode(
            Array(
                #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"hysteresis":{"preset":"naive","maxAccuracy":50}}\#(expires)}]}"#
                    .utf8)
        ).catalog
        // Inside, 10 m further north each time: the last fix is 40 m north (s = -60).
        var lines = (0...4).map { step in
            #"{"device":"d","time":"2026-03-02T08:00:\#(step)0Z","lat":\#(52.37 + Double(step) * 10 / 111_195),"lon":4.89}"#
        }
        var setup = Setup(catalog: catalog, until: Timestamp(rfc3339: "2026-03-02T08:01:30Z"))
        switch force {
        case "coarse":
            lines.append(#"{"device":"d","time":"2026-03-02T08:00:45Z","lat":52.3704,"lon":4.89,"accuracy":80}"#)
            lines.append(#"{"time":"2026-03-02T08:00:50Z","op":"removeDevice","devices":["d"]}"#)
        case "removeDevice": lines.append(#"{"time":"2026-03-02T08:00:50Z","op":"removeDevice","devices":["d"]}"#)
        case "ttl": setup.deviceTTL = TimeSpan(seconds: 30)
        default: break
        }
        let whole = String(decoding: try Self.output(setup, lines: lines, cuts: []), as: UTF8.self)
        let exit = try #require(whole.split(separator: "\n").first { $0.contains(#""event":"exit""#) }, "\(whole)")
        #expect(exit.contains(#""distance":-60"#), "\(exit)")
        for cut in 1..<lines.count {
            #expect(
                String(decoding: try Self.output(setup, lines: lines, cuts: [cut]), as: UTF8.self) == whole,
                "cut \(cut)")
        }
    }

    /// Resuming with the same catalog keeps its requests' state, also those control records
    /// removed or replaced before the cut; a changed request is replaced.
    @Test func resumingWithTheSameCatalogGoesOnAndAChangedRequestIsReplaced() throws {
        var generator = SplitMix(state: 77)
        // Control records replace and remove catalog requests before the cut: giving the catalog
        // again must not bring them back.
        let (catalog, lines) = try Self.generatedStream(using: &generator)
        #expect(
            lines.contains { $0.contains(#""op":"removePending""#) } && lines.contains { $0.contains(#""op":"add""#) })
        let setup = Setup(catalog: catalog, until: Fixtures.at(2000))
        let whole = try Self.output(setup, lines: lines, cuts: [])
        let positions = Self.cutPositions(lines)
        let cut = positions[positions.count / 2]
        // Part one with a checkpoint, part two resumed with the catalog given again.
        var options = RunPipeline.Options()
        let directory = Scratch.root.appendingPathComponent("same-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func run(_ part: ArraySlice<String>, catalog: Catalog, state: [UInt8]?, until: Timestamp?) throws -> (
            [UInt8], [UInt8]?
        ) {
            let path = directory.appendingPathComponent(UUID().uuidString).path
            try Data(part.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
            options.until = until
            let pipeline = RunPipeline(
                catalog: catalog, catalogDecoder: CatalogDecoder(), options: options, encoder: NDJSONEventEncoder(),
                logger: Logger(label: "test"))
            pipeline.resumeState = state
            pipeline.checkpointing = state == nil
            var output: [UInt8] = []
            _ = try pipeline.run(inputs: [path], write: { output += $0 }, report: { _ in })
            return (output, pipeline.lastCheckpoint)
        }
        let (head, state) = try run(lines[..<cut], catalog: catalog, state: nil, until: nil)
        let (tail, _) = try run(lines[cut...], catalog: catalog, state: state, until: Fixtures.at(2000))
        #expect(head + tail == whole)
        // A changed request replaces the checkpoint's: its state starts afresh.
        var changed = catalog
        changed.requests[0].content.title = "changed"
        let (other, _) = try run(lines[cut...], catalog: changed, state: state, until: Fixtures.at(2000))
        #expect(other != tail)
        #expect(!String(decoding: other, as: UTF8.self).contains(#" depot","#), "an event with the old content")
    }
}
