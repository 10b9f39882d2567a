import Foundation
import TestSupport
import Testing

/// SPEC §12 position filters through the CLI: the summary's count, a line stamped too far
/// ahead reported with its line number and moving nothing, the same events with `--threads`,
/// and `explain` naming the filter that dropped a fix.
@Suite struct FilterCommandTests {
    static let scenario = "Data/scenarios/filters-real-drive"

    @Test func theSummaryCountsFilteredFixesAndTheFutureLineIsBad() throws {
        let result = try CLI.run([
            "run", "--triggers", "\(Self.scenario)/triggers.json", "\(Self.scenario)/readings.ndjson",
        ])
        #expect(result.status == 0)
        #expect(
            result.stderr.contains(
                "readings.ndjson:64: field \"time\": future time: 2462636436 s ahead of the latest time read "
                    + "(2020-12-18T06:19:24Z), over maxFuture 300 s"))
        #expect(result.stderr.contains("fenceline: 106 readings, 1 skipped, 0 stale, 23 events, filtered 71"))
        // The threads' engines give the same events (a catalog with maxFuture runs on one).
        let threaded = try CLI.run([
            "run", "--threads", "2", "--triggers", "\(Self.scenario)/triggers.json", "\(Self.scenario)/readings.ndjson",
        ])
        #expect(threaded.stdout == result.stdout)
    }

    /// A limit met exactly, with positions made as a test writes them (latitude plus metres over
    /// the Earth's radius, so the distance back is off in its last bits): within a micrometre is
    /// at the limit, as for a fence's boundary. A pair `near` apart enters, one `far` apart does
    /// not exit; a move of exactly `maxSpeed` and a fix exactly `minDistance` away are taken.
    @Test func limitsMetExactlyAreNotDecidedByRounding() throws {
        let directory = try CLI.temporaryDirectory()
        func run(_ catalog: String, _ lines: [String]) throws -> [String] {
            let triggers = directory.appendingPathComponent("triggers.json")
            let readings = directory.appendingPathComponent("readings.ndjson")
            try Data(catalog.utf8).write(to: triggers)
            try Data(lines.joined(separator: "\n").utf8).write(to: readings)
            let result = try CLI.run(["run", "--triggers", triggers.path, readings.path])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").compactMap {
                $0.firstMatch(of: /"event":"(\w+)"/).map { String($0.1) }
            }
        }
        func fix(_ device: String, _ second: Int, _ latitude: Double) -> String {
            #"{"device":"\#(device)","time":"2026-03-02T08:00:\#(second < 10 ? "0" : "")\#(second)Z","lat":\#(latitude),"lon":4.89}"#
        }
        let proximity =
            #"{"requests":[{"id":"P","trigger":{"type":"proximity","near":50,"far":75,"among":["tag-*"],"to":["truck-*"]}}]}"#
        #expect(try run(proximity, [fix("tag-1", 0, 52.37), fix("truck-1", 0, 52.37044966018186)]) == ["enter"])
        #expect(
            try run(
                proximity,
                [
                    fix("tag-1", 0, 52.4), fix("truck-1", 0, 52.40008993203637), fix("truck-1", 10, 52.40067449027279),
                    fix("truck-1", 20, 52.400665497069156),
                ]) == ["enter"])
        let speed =
            #"{"defaults":{"filters":{"maxSpeed":10},"hysteresis":"naive"},"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"initial":"state"}}]}"#
        #expect(
            try run(speed, [fix("a", 0, 52.37179864072745), fix("a", 10, 52.37089932036372), fix("a", 20, 52.37)])
                == ["state", "enter"])
        let distance =
            #"{"defaults":{"filters":{"minDistance":20}},"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.371124150454655,"lon":4.89},"radius":110,"hysteresis":"naive"}}]}"#
        #expect(try run(distance, [fix("a", 0, 52.37), fix("a", 10, 52.37017986407274)]) == ["enter"])
    }

    @Test func aFutureLineMovesNoClockAndNoTimer() throws {
        // A repeating 60 s timer: the line a day ahead must not fire 1,440 of them.
        let catalog = #"""
            {"defaults":{"filters":{"maxFuture":120}},"requests":[{"id":"ping","trigger":{"type":"timeInterval","seconds":60,"repeats":true}}]}
            """#
        let lines = [
            #"{"device":"a","time":"2026-03-02T08:00:00Z","lat":52.37,"lon":4.89}"#,
            #"{"device":"a","time":"2026-03-03T08:00:00Z","lat":52.37,"lon":4.89}"#,
            #"{"op":"tick","time":"2026-03-02T08:02:00Z"}"#,
            #"{"device":"a","time":"2026-03-02T08:02:30Z","lat":52.37,"lon":4.89}"#,
        ]
        let directory = Scratch.root.appendingPathComponent("filters-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let triggers = directory.appendingPathComponent("triggers.json")
        try catalog.write(to: triggers, atomically: true, encoding: .utf8)
        let result = try CLI.run(
            ["run", "--triggers", triggers.path, "-"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0)
        #expect(result.stderr.contains("-:2: field \"time\": future time: 86400 s ahead"))
        // Two fires by the tick at 08:02 and none after: the clock never went to the next day, and
        // the fix at 08:02:30 is not stale.
        #expect(result.stdout.split(separator: "\n").count == 2)
        #expect(result.stderr.contains("fenceline: 3 readings, 1 skipped, 0 stale, 2 events"))
    }

    @Test func explainNamesTheFilterThatDroppedAFix() throws {
        let result = try CLI.run([
            "explain", "--triggers", "\(Self.scenario)/triggers.json", "--device", "car", "--request", "olive-grove",
            "\(Self.scenario)/readings.ndjson",
        ])
        #expect(result.status == 0)
        #expect(result.stdout.contains("filters, from its last accepted fix: faster than 60 m/s dropped"))
        #expect(
            result.stdout.contains(
                "ignored: filtered (maxSpeed 60 m/s): 732.3 m/s from the last accepted fix (732.3 m in 1 s)"))
    }
}

/// SPEC §12 expiry and forgetting through the CLI: `--device-ttl`, `expires` and `removeDevice`
/// give the same events on one engine and on threads, and `--device-ttl` is checked.
@Suite struct ExpiryCommandTests {
    static let scenario = "Data/scenarios/expiry-and-forgetting"

    @Test func threadsGiveTheSameEvents() throws {
        let arguments = [
            "run", "--device-ttl", "120", "--triggers", "\(Self.scenario)/triggers.json",
            "\(Self.scenario)/readings.ndjson",
        ]
        let one = try CLI.run(arguments)
        let two = try CLI.run(arguments + ["--threads", "2"])
        #expect(one.status == 0)
        #expect(one.stdout.contains(#""reason":"expired""#) && one.stdout.contains(#""reason":"removed""#))
        #expect(two.stdout == one.stdout)
    }

    @Test func explainShowsTheForcedExit() throws {
        let result = try CLI.run([
            "explain", "--device-ttl", "120", "--triggers", "\(Self.scenario)/triggers.json", "--device", "truck-2",
            "--request", "depot", "\(Self.scenario)/readings.ndjson",
        ])
        #expect(
            result.stdout.contains(
                "2026-03-02T08:05:30Z  removed                             inside → outside  the device was removed "
                    + "(removeDevice): its stay ends; → #9 exit notified"))
    }

    @Test func aBadTimeToLiveIsRefused() throws {
        let result = try CLI.run(
            ["run", "--device-ttl", "0", "--triggers", "\(Self.scenario)/triggers.json", "-"], stdin: "")
        #expect(result.status == 64)
        #expect(result.stderr.contains("--device-ttl must be a number of seconds > 0"))
    }
}

/// `explain` for beacon, time and calendar requests (SPEC §12): each sighting with its smoothed
/// RSSI, distance, class and band, each timer, each due time fired or muted, and what is still ahead.
@Suite struct ExplainEveryTriggerTests {
    /// `explain` of a bundled scenario's request for one device.
    static func explain(_ name: String, device: String, request: String) throws -> CLIResult {
        let scenario = "Data/scenarios/\(name)"
        return try CLI.run([
            "explain", "--triggers", "\(scenario)/triggers.json", "--device", device, "--request", request,
            "\(scenario)/readings.ndjson",
        ])
    }

    @Test func aBeaconRequestShowsEachSightingAndTimer() throws {
        let result = try Self.explain("beacon-timeout-boundary", device: "lost", request: "dock")
        #expect(result.status == 0)
        #expect(result.stdout.contains("a sighting counts when its class is far or nearer"))
        #expect(
            result.stdout.contains(
                "2026-03-02T08:00:00Z      sighting      1/7      -60       -60          1.02  near   outside → inside  counts; → #2 enter notified"
            ))
        #expect(
            result.stdout.contains(
                "2026-03-02T08:00:30Z      exit timeout                                               inside → outside  no counting sighting for 30 s; → #3 exit notified"
            ))
    }

    /// The band (SPEC §6): sightings past the 3 m boundary that stay `near` say the band held them.
    @Test func aBeaconSightingHeldByTheBandSaysSo() throws {
        let result = try Self.explain("beacon-band-after-empty-window", device: "phone", request: "dock")
        #expect(result.status == 0)
        let held = result.stdout.split(separator: "\n").filter {
            $0.contains("near held by the band (farther from 3.3 m)")
        }
        #expect(held.count == 3)
        #expect(held.first?.contains("3.11  near") == true)
        // The first sighting (2.58 m) and the one that leaves (3.48 m, far) are not held.
        #expect(!result.stdout.contains("2.58  near   outside → inside  near held"))
        #expect(result.stdout.contains("3.48  far    inside → outside  does not count (beyond near)"))
    }

    @Test func aTimeRequestShowsEachDueTimeFiredOrMuted() throws {
        let catalog = #"""
            {"requests":[{"id":"ping","trigger":{"type":"timeInterval","seconds":60,"repeats":true},
             "schedule":{"timeZone":"UTC","windows":[{"days":["mon"],"start":"08:00","end":"08:02"}]}}]}
            """#
        let directory = Scratch.root.appendingPathComponent("explain-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let triggers = directory.appendingPathComponent("triggers.json")
        try catalog.write(to: triggers, atomically: true, encoding: .utf8)
        let result = try CLI.run(
            [
                "explain", "--triggers", triggers.path, "--device", "any", "--request", "ping", "--until",
                "2026-03-02T08:03:30Z", "-",
            ],
            stdin: #"{"op":"tick","time":"2026-03-02T08:00:00Z"}"# + "\n")
        #expect(result.status == 0)
        #expect(result.stdout.contains("Request \"ping\" (timeInterval: every 60 s from when it was added)"))
        #expect(result.stdout.contains("2026-03-02T08:01:00Z  due   → #1 fire notified; next due 2026-03-02T08:02:00Z"))
        #expect(
            result.stdout.contains(
                "2026-03-02T08:02:00Z  due   muted: the schedule is closed; next due 2026-03-02T08:03:00Z"))
        #expect(result.stdout.contains("Not yet due at the end: next due 2026-03-02T08:04:00Z"))
    }
}
