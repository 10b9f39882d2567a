import Foundation
import TestSupport
import Testing

/// Issue 26, defect 4: inputs read whole have a cap, and compressed bombs are refused as located
/// errors in bounded memory (each case here runs under a 1 GiB address-space limit).
@Suite(.serialized) struct InputLimitTests {
    /// Runs `arguments` through bash under `ulimit -v 1 GiB`; the result's stdout is the command's
    /// stderr, then `exit N`.
    static func limited(_ arguments: String) throws -> CLIResult {
        try CLI.runShell(
            #"ulimit -v 1048576; "$0" \#(arguments) 2>&1 >/dev/null; echo "exit $?""#, arguments: [CLI.binary.path])
    }

    static func makeBomb(_ path: String, megabytes: Int) throws {
        let made = try CLI.runShell(
            #"head -c "$1" /dev/zero | gzip -1 > "$0""#, arguments: [path, String(megabytes << 20)])
        #expect(made.status == 0)
    }

    @Test func anEndlessCatalogIsRefusedAtTheCap() throws {
        let result = try Self.limited("validate /dev/zero")
        #expect(
            result.stdout.contains(
                "/dev/zero: larger than 256 MiB, the most read whole (--max-catalog-mb raises the limit)"))
        #expect(result.stdout.hasSuffix("exit 65\n"), "\(result.stdout)")
        let lower = try Self.limited("validate --max-catalog-mb 1 /dev/zero")
        #expect(lower.stdout.contains("larger than 1 MiB"))
    }

    @Test func compressedBombsAreRefusedAsLocatedErrors() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("catalog.json.gz").path
        try Self.makeBomb(catalog, megabytes: 200)
        let refused = try Self.limited("validate \(catalog)")
        #expect(refused.stdout.contains("refused as a decompression bomb"), "\(refused.stdout)")
        #expect(refused.stdout.hasSuffix("exit 65\n"))
        // A bomb among readings is one bad line; the readings of other files still run.
        let readings = directory.appendingPathComponent("day.ndjson.gz").path
        try Self.makeBomb(readings, megabytes: 200)
        let run = try Self.limited(
            "run --triggers Data/scenarios/real-drive-visnjan/triggers.json \(readings) Data/scenarios/real-drive-visnjan/readings.ndjson"
        )
        #expect(
            run.stdout.contains("day.ndjson.gz:2: the gzip stream inflates over 200 times its size"), "\(run.stdout)")
        #expect(run.stdout.contains("fenceline: 104 readings, 2 skipped, 0 stale, 10 events"))
        #expect(run.stdout.hasSuffix("exit 0\n"))
    }

    @Test func aResumedFileThatIsNoCheckpointIsRefusedBeforeItIsRead() throws {
        let result = try Self.limited("run --resume /dev/zero")
        #expect(result.stdout.contains("/dev/zero: not a Fenceline checkpoint"), "\(result.stdout)")
        #expect(result.stdout.hasSuffix("exit 65\n"))
    }

    /// Issue 26, defect 3: a jump of the clock over billions of firings (a 60 s repeating interval
    /// and --until in the year 9999) streams its events in bounded memory, and a reader that goes
    /// away stops it.
    @Test func aClockJumpStreamsInBoundedMemory() throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = directory.appendingPathComponent("tick.json").path
        try #"{"requests":[{"id":"t","trigger":{"type":"timeInterval","seconds":60,"repeats":true}}]}"#.write(
            toFile: triggers, atomically: true, encoding: .utf8)
        let readings = directory.appendingPathComponent("one.ndjson").path
        try #"{"device":"d","time":"2026-01-01T00:00:00Z","lat":1,"lon":2}"#.write(
            toFile: readings, atomically: true, encoding: .utf8)
        let result = try CLI.runShell(
            #"ulimit -v 1048576; timeout 60 "$0" run --triggers "$1" --until 9999-12-31T23:59:59Z "$2" 2>/dev/null | head -c 20000000 | wc -l; echo "exit ${PIPESTATUS[0]}""#,
            arguments: [CLI.binary.path, triggers, readings])
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect((Int(lines.first?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0) > 150_000, "\(result.stdout)")
        #expect(lines.last == "exit 74", "the reader went away: \(result.stdout)")
    }

    @Test func aHugeContentFieldIsRefused() throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = directory.appendingPathComponent("big.json").path
        let body = String(repeating: "x", count: 70_000)
        try
            #"{"requests":[{"id":"t","content":{"body":"\#(body) {device}"},"trigger":{"type":"timeInterval","seconds":60}}]}"#
            .write(toFile: triggers, atomically: true, encoding: .utf8)
        let result = try CLI.run(["validate", triggers])
        #expect(result.status == 65)
        #expect(
            result.stderr.contains(#"request "t": requests[0].content.body: body is 70009 bytes; at most 65536"#),
            "\(result.stderr)")
    }
}
