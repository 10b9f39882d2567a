import Foundation
import TestSupport
import Testing

/// SPEC §12 device proximity through the CLI: the same events on several threads (a catalog with
/// a proximity request runs on one engine, an `add` of one is refused there), `explain` for a
/// pair, and `validate` naming each bad field.
@Suite struct ProximityCommandTests {
    static let scenario = "Data/scenarios/proximity-real-drives"

    @Test func threadsGiveTheSameEvents() throws {
        let arguments = ["run", "--triggers", "\(Self.scenario)/triggers.json", "\(Self.scenario)/readings.ndjson"]
        let one = try CLI.run(arguments)
        let two = try CLI.run(arguments + ["--threads", "2"])
        #expect(one.status == 0 && two.status == 0)
        #expect(!one.stdout.isEmpty && two.stdout == one.stdout)
    }

    /// "Never by checking every pair" (SPEC §12), measured: on 10,000 devices each fix looks at
    /// the few devices in the grid cells around it, not at the 9,999 others.
    @Test func aFixLooksAtTheDevicesAroundItNotAtEveryDevice() throws {
        let scenario = "Data/scenarios/proximity-10k-devices"
        let result = try CLI.run([
            "run", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson", "-o", "/dev/null",
            "--timings",
        ])
        #expect(result.status == 0)
        let numbers = try #require(
            result.stderr.firstMatch(
                of: /proximity: (\d+) fixes looked at (\d+) devices in the grid and evaluated (\d+) pairs/),
            "\(result.stderr)")
        let (fixes, looked, evaluated) = (Int(numbers.1)!, Int(numbers.2)!, Int(numbers.3)!)
        #expect(fixes == 45_393, "every fix of a device of the request looks for pairs")
        // About 45 a fix: the tags within the cells (about 2 × near wide) around it.
        #expect(looked < fixes * 100, "\(looked) devices looked at over \(fixes) fixes")
        #expect(evaluated >= 600, "each of the 300 enters and 300 exits is an evaluation")
        #expect(evaluated < fixes)
    }

    @Test func anAddOfAProximityRequestIsRefusedOnSeveralThreads() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.json")
        try Data(
            #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100}}]}"#
                .utf8
        ).write(to: catalog)
        let readings = directory.appendingPathComponent("readings.ndjson")
        try Data(
            ([
                #"{"time":"2026-03-02T08:00:00Z","op":"add","request":{"id":"meet","trigger":{"type":"proximity","near":50,"among":["a","b"]}}}"#,
                #"{"device":"a","time":"2026-03-02T08:00:01Z","lat":52.37,"lon":4.89}"#,
                #"{"device":"b","time":"2026-03-02T08:00:02Z","lat":52.37,"lon":4.8901}"#,
            ].joined(separator: "\n") + "\n").utf8
        ).write(to: readings)
        let one = try CLI.run(["run", "--triggers", catalog.path, readings.path])
        #expect(
            one.stdout.contains(#""request":"meet","device":"a","other":"b","trigger":"proximity","event":"enter""#))
        let two = try CLI.run(["run", "--triggers", catalog.path, readings.path, "--threads", "2"])
        #expect(two.status == 0 && !two.stdout.contains("meet"))
        #expect(
            two.stderr.contains(
                "readings.ndjson:1: field \"request.trigger.type\": a proximity request cannot be added by a record in a run over several threads"
            ))
    }

    @Test func explainShowsThePairs() throws {
        let result = try CLI.run([
            "explain", "--triggers", "\(Self.scenario)/triggers.json", "--device", "car-a", "--request", "fresh-fixes",
            "\(Self.scenario)/readings.ndjson",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.hasPrefix("Request \"fresh-fixes\" (proximity: among car-a; to car-b) for device \"car-a\""))
        #expect(result.stdout.contains("fixes at most 30 s apart, a pair ages out after that"))
        #expect(result.stdout.contains("age-out"))
        #expect(result.stdout.contains("the older fix is more than maxAge old; → #"))
        #expect(result.stdout.contains("fix of car-b  car-b"))
    }

    @Test func validateNamesEveryBadField() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("bad.json")
        try Data(
            #"{"requests":[{"id":"p","trigger":{"type":"proximity","near":50,"far":20,"among":["t*g"],"maxAge":-1}}]}"#
                .utf8
        ).write(to: catalog)
        let result = try CLI.run(["validate", catalog.path])
        #expect(result.status == 65)
        for path in ["requests[0].trigger.far", "requests[0].trigger.among[0]", "requests[0].trigger.maxAge"] {
            #expect(result.stderr.contains("request \"p\": \(path):"), "\(path): \(result.stderr)")
        }
    }
}
