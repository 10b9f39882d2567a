import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `readings`, gzip inputs, `--format geojson`, progress and `explain` through the binary.
@Suite(.serialized) struct InputOutputCommandTests {
    let scenario = "Data/scenarios/real-drive-visnjan"

    func gzip(_ path: String, into directory: URL, name: String) throws -> String {
        let target = directory.appendingPathComponent(name).path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "gzip -c '\(Fixtures.packageRoot.path)/\(path)' > '\(target)'"]
        try process.run()
        process.waitUntilExit()
        return target
    }

    /// `readings` writes the normalised form, which `run` reads to the same events.
    @Test func readingsRoundTripThroughRun() throws {
        let readings = try CLI.run(["readings", "\(scenario)/readings.ndjson"])
        #expect(readings.status == 0)
        #expect(readings.stdout.split(separator: "\n").count == 104)
        #expect(readings.stderr == "fenceline: 104 readings, 0 skipped\n")
        let direct = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson"])
        let piped = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", "-"], stdin: readings.stdout)
        #expect(piped.stdout == direct.stdout)
    }

    /// `-o -` is standard output, as Unix tools read it, for run, readings and render (no file
    /// named `-` appears); `--state-out -` too, when the events go to a file.
    @Test func dashAsOutputIsStandardOutput() throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = Fixtures.packageRoot.appendingPathComponent("\(scenario)/triggers.json").path
        let readings = Fixtures.packageRoot.appendingPathComponent("\(scenario)/readings.ndjson").path
        let plain = try CLI.run(["run", "--triggers", triggers, readings], in: directory)
        let dashed = try CLI.run(["run", "--triggers", triggers, readings, "-o", "-"], in: directory)
        #expect(dashed.status == 0 && !plain.stdout.isEmpty && dashed.stdout == plain.stdout)
        let events = directory.appendingPathComponent("events.ndjson").path
        let state = try CLI.run(
            ["run", "--triggers", triggers, readings, "-o", events, "--state-out", "-"], in: directory)
        #expect(state.status == 0 && state.stdout.hasPrefix("{") && state.stdout.contains(#""pending""#))
        #expect(try String(contentsOfFile: events, encoding: .utf8) == plain.stdout)
        // Events on standard output, by default or by `-o -`: the state there would read as one
        // more event.
        for events in [[], ["-o", "-"]] {
            let both = try CLI.run(
                ["run", "--triggers", triggers, readings, "--state-out", "-"] + events, in: directory)
            #expect(both.status == 64 && both.stderr.contains("where the events go"), "\(events): \(both.stderr)")
            #expect(both.stdout.isEmpty)
        }
        let normalised = try CLI.run(["readings", readings, "-o", "-"], in: directory)
        #expect(normalised.status == 0 && normalised.stdout.split(separator: "\n").count == 104)
        let picture = try CLI.run(["render", "--triggers", triggers, readings, "-o", "-"], in: directory)
        #expect(picture.status == 0 && picture.stdout.contains("<svg"), "\(picture.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("-").path))
    }

    /// Control records are not readings: counted in the summary, not written.
    @Test func readingsCountsControlRecordsWithoutWritingThem() throws {
        let result = try CLI.run(
            ["readings", "-"],
            stdin: #"{"op":"tick","time":5}"# + "\n" + #"{"device":"a","time":6,"lat":1,"lon":2}"# + "\n")
        #expect(result.stdout == #"{"device":"a","time":"1970-01-01T00:00:06Z","lat":1,"lon":2}"# + "\n")
        #expect(result.stderr == "fenceline: 1 reading, 0 skipped, 1 control record not written\n")
    }

    /// CSV in, normalised NDJSON out, with sub-millisecond times kept and bad rows reported.
    @Test func readingsOfCSVKeepFieldsAndReportBadRows() throws {
        let directory = try CLI.temporaryDirectory()
        let csv = directory.appendingPathComponent("trace.csv")
        try Data(
            """
            device,time,lat,lon,accuracy,speed
            van,2026-03-02T08:00:00.123456Z,52.37,4.89,5,3.5
            van,2026-03-02T08:00:01Z,95,4.89,5,
            """.utf8
        ).write(to: csv)
        let result = try CLI.run(["readings", csv.path])
        #expect(
            result.stdout
                == #"{"device":"van","time":"2026-03-02T08:00:00.123456Z","lat":52.37,"lon":4.89,"accuracy":5,"speed":3.5}"#
                + "\n")
        #expect(result.stderr.contains("trace.csv:3: field \"lat\""))
        #expect(result.status == 0)
        let strict = try CLI.run(["readings", "--strict", csv.path])
        #expect(strict.status == 65)
    }

    /// A .gz input reads like the plain file; a truncated one keeps the lines before the damage
    /// and reports where it ends.
    @Test func gzipInputsAreReadTransparently() throws {
        let directory = try CLI.temporaryDirectory()
        let packed = try gzip("\(scenario)/readings.ndjson", into: directory, name: "drive.ndjson.gz")
        let plain = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson"])
        let unpacked = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", packed])
        #expect(unpacked.stdout == plain.stdout)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: packed))
        let cut = directory.appendingPathComponent("cut.ndjson.gz")
        try bytes.prefix(bytes.count * 3 / 4).write(to: cut)
        let truncated = try CLI.run(["readings", cut.path])
        #expect(truncated.status == 0)
        #expect(truncated.stderr.contains("the gzip stream is truncated"))
        let kept = truncated.stdout.split(separator: "\n").count
        #expect(kept > 50 && kept < 104)
        let strict = try CLI.run(["run", "--strict", "--triggers", "\(scenario)/triggers.json", cut.path])
        #expect(strict.status == 65)
        #expect(!strict.stdout.isEmpty)
    }

    /// `--format geojson` is one FeatureCollection of points, one per event.
    @Test func geojsonOutputIsAFeatureCollection() throws {
        let result = try CLI.run([
            "run", "--format", "geojson", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson",
        ])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["type"] as? String == "FeatureCollection")
        let features = object?["features"] as? [[String: Any]] ?? []
        #expect(features.count == 10)
        let first = features.first
        let geometry = first?["geometry"] as? [String: Any]
        #expect(geometry?["type"] as? String == "Point")
        #expect((geometry?["coordinates"] as? [Double])?.count == 2)
        let properties = first?["properties"] as? [String: Any]
        #expect(properties?["event"] as? String == "enter")
        #expect(properties?["request"] as? String == "main-road")
        let empty = try CLI.run(
            ["run", "--format", "geojson", "--triggers", "\(scenario)/triggers.json", "-"], stdin: "")
        #expect(empty.stdout == #"{"type":"FeatureCollection","features":[]}"# + "\n")
    }

    /// Progress lines appear when forced, never with --quiet, and not by default off a terminal.
    @Test func progressShowsWhenForcedAndNotWhenQuiet() throws {
        let arguments = ["run", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson"]
        let quietDefault = try CLI.run(arguments)
        #expect(!quietDefault.stderr.contains("%"))
        let forced = try CLI.run(arguments + ["--progress"])
        #expect(forced.stdout == quietDefault.stdout)
        #expect(forced.stderr.hasPrefix("fenceline: 100% · 104 readings · "))
        #expect(forced.stderr.contains(" k/s · 10 events\n"))
        let sharded = try CLI.run(arguments + ["--progress", "--threads", "2"])
        #expect(sharded.stderr.hasPrefix("fenceline: 100% · 104 readings · "))
        let silenced = try CLI.run(arguments + ["--progress", "--quiet"])
        #expect(silenced.stderr.isEmpty)
    }

    /// `explain` on the jitter scenario: the naive fence flaps, the default one enters once and
    /// exits once, at the numbers `run` gives those events.
    @Test func explainTellsTheJitterStory() throws {
        let jitter = "Data/scenarios/jitter-at-edge"
        let run = try CLI.run(["run", "--triggers", "\(jitter)/triggers.json", "\(jitter)/readings.ndjson"])
        let pairEvents = run.stdout.split(separator: "\n").filter { $0.contains(#""request":"edge-default""#) }
        #expect(pairEvents.count == 2)
        let explained = try CLI.run([
            "explain", "--triggers", "\(jitter)/triggers.json", "--device", "walker", "--request", "edge-default",
            "\(jitter)/readings.ndjson",
        ])
        #expect(explained.status == 0)
        for line in pairEvents {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let sequence = object?["seq"] as? Int ?? 0
            let kind = object?["event"] as? String ?? ""
            #expect(explained.stdout.contains("→ #\(sequence) \(kind) notified"))
        }
        #expect(explained.stdout.contains("exit when s > +20 m"))
        #expect(explained.stdout.contains("between the thresholds"))
        let unknown = try CLI.run([
            "explain", "--triggers", "\(jitter)/triggers.json", "--device", "walker", "--request", "nope",
            "\(jitter)/readings.ndjson",
        ])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no request \"nope\""))
    }

    /// The real GPX drive run directly gives the events of the scenario made from it, with one
    /// thread or two; without --device the device is the track's name.
    @Test func gpxRunsLikeTheNDJSONItWasConvertedTo() throws {
        let expected = try String(
            contentsOf: Fixtures.dataDirectory.appendingPathComponent("scenarios/real-drive-visnjan/expected.ndjson"),
            encoding: .utf8)
        for threads in ["1", "2"] {
            let result = try CLI.run([
                "run", "--triggers", "\(scenario)/triggers.json", "--device", "car", "--threads", threads,
                "Data/gpx/around-visnjan-with-car.gpx",
            ])
            #expect(result.status == 0)
            #expect(result.stdout == expected)
        }
        let named = try CLI.run(["readings", "Data/gpx/around-visnjan-with-car.gpx"])
        #expect(named.stdout.hasPrefix(#"{"device":"2020-12-18 07:24:29","time":"2020-12-18T06:15:50Z""#))
        let bad = try CLI.run(["readings", "Data/gpx/cerknicko-without-times.gpx"])
        #expect(bad.stderr.contains("cerknicko-without-times.gpx:"))
        #expect(bad.stderr.contains("field \"time\""))
    }

    /// A far --until with two threads is walked in steps, each merged and written: the same
    /// events, byte for byte, as one engine's (tens of thousands of them, from repeating timers, in
    /// steps that double from an hour).
    @Test func aFarUntilWithThreadsGivesOneEnginesEvents() throws {
        let arguments = [
            "run", "--quiet", "--triggers", "Data/hostile/inputs/catalog.json", "Data/hostile/inputs/readings.ndjson",
            "--until", "2026-05-01T00:00:00Z",
        ]
        let one = try CLI.run(arguments)
        let two = try CLI.run(arguments + ["--threads", "2"])
        #expect(one.status == 0 && two.status == 0)
        #expect(one.stdout.count > 5_000_000)
        #expect(two.stdout == one.stdout)
        // With a reorder window the walk's ticks pass through the held readings, in time order.
        let held = try CLI.run(arguments + ["--reorder-window", "30"])
        let heldTwo = try CLI.run(arguments + ["--reorder-window", "30", "--threads", "2"])
        #expect(held.status == 0 && heldTwo.status == 0)
        #expect(held.stdout.count > 5_000_000)
        #expect(heldTwo.stdout == held.stdout)
    }

    /// NMEA: told by content (a gpsd log's `#` header, then `$` sentences), one fix per epoch,
    /// gzip looked through, bad checksums reported with their line.
    @Test func nmeaCapturesReadAsFixes() throws {
        let result = try CLI.run(["readings", "--device", "car", "Data/nmea/bt451.log"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count > 10)
        #expect(lines.allSatisfy { $0.hasPrefix(#"{"device":"car","time":"2009-12-0"#) })
        let directory = try CLI.temporaryDirectory()
        let packed = try gzip("Data/nmea/bt451.log", into: directory, name: "bt451.nmea.gz")
        #expect(try CLI.run(["readings", "--device", "car", packed]).stdout == result.stdout)
        let firefly = try CLI.run(["readings", "Data/nmea/firefly-II.log"])
        #expect(firefly.stderr.contains("firefly-II.log:"))
        #expect(firefly.stderr.contains("field \"checksum\""))
    }

    /// `render` writes a well-formed SVG with one marker per event, or an HTML page embedding it.
    @Test func renderDrawsTheRunAsSVGOrHTML() throws {
        let directory = try CLI.temporaryDirectory()
        let svg = directory.appendingPathComponent("drive.svg").path
        let result = try CLI.run([
            "render", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson", "-o", svg,
        ])
        #expect(result.status == 0)
        #expect(result.stderr == "fenceline: drew 5 requests, 104 fixes of 1 device, 10 events; 0 skipped\n")
        let text = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(text.hasPrefix("<svg") || text.hasPrefix("<?xml"))
        #expect(text.contains("readings.ndjson · triggers.json"))
        let parser = XMLParser(data: Data(text.utf8))
        #expect(parser.parse())
        let page = try CLI.run([
            "render", "--html", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson",
        ])
        #expect(page.stdout.hasPrefix("<!DOCTYPE html>"))
        #expect(page.stdout.contains("<svg"))
        #expect(!page.stdout.contains("http://") || !page.stdout.contains("<script src"))
    }
}
