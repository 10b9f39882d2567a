import Foundation
import TestSupport
import Testing

/// Issue 26, defects 8 and 9: what is meant for a terminal never carries the input's control
/// characters, and output that cannot be written is a failure (exit 74), never a quiet success.
@Suite(.serialized) struct TerminalAndPipeTests {
    static let catalog = #"""
        {"requests":[{"id":"gate\u001b[2J","content":{"title":"In\u0007\u001b]0;owned\u0007"},
          "trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"hysteresis":"naive"}}]}
        """#

    static let readings = #"""
        {"device":"\u001b]0;owned\u0007van","time":"2026-03-02T07:59:50Z","lat":52.38,"lon":4.89}
        {"device":"\u001b]0;owned\u0007van","time":"2026-03-02T08:00:00Z","lat":52.37,"lon":4.89}
        {"device":"\u001b]0;owned\u0007van","time":"2026-03-02T08:00:10Z","lat":"\u001b[31m","lon":4.89}

        """#

    /// Whether `text` holds a C0 control other than the newline, or DEL.
    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }
    }

    @Test func textOutputErrorsAndExplainEscapeControlCharacters() throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = directory.appendingPathComponent("triggers.json").path
        try Self.catalog.write(toFile: triggers, atomically: true, encoding: .utf8)
        let text = try CLI.run(["run", "--triggers", triggers, "--format", "text", "-"], stdin: Self.readings)
        #expect(text.status == 0)
        #expect(text.stdout.contains(#"\u001B]0;owned\u0007van"#), "\(text.stdout)")
        #expect(text.stdout.contains(#"gate\u001B[2J"#))
        #expect(!Self.hasControls(text.stdout))
        #expect(text.stderr.contains("-:3"), "the bad line is reported: \(text.stderr)")
        #expect(!Self.hasControls(text.stderr))
        let explain = try CLI.run(
            [
                "explain", "--triggers", triggers, "--device", "\u{1B}]0;owned\u{07}van", "--request", "gate\u{1B}[2J",
                "-",
            ],
            stdin: Self.readings)
        #expect(explain.status == 0, "\(explain.stderr)")
        #expect(explain.stdout.contains(#"\u001B]0;owned\u0007van"#))
        #expect(!Self.hasControls(explain.stdout))
        let missing = try CLI.run(["run", "--triggers", triggers, "no-such-\u{1B}[2J.ndjson"])
        #expect(missing.status == 66)
        #expect(missing.stderr.contains(#"no-such-\u001B[2J.ndjson"#))
        #expect(!Self.hasControls(missing.stderr))
    }

    /// A reader that closes the pipe early (`| head`) makes the run stop, report it and its
    /// summary, and exit 74; no checkpoint is written after events that were lost.
    @Test func aClosedOutputPipeExits74WithTheSummary() throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = directory.appendingPathComponent("tick.json").path
        try #"{"requests":[{"id":"t","trigger":{"type":"timeInterval","seconds":60,"repeats":true}}]}"#.write(
            toFile: triggers, atomically: true, encoding: .utf8)
        let input = directory.appendingPathComponent("many.ndjson").path
        let lines = (1...200_000).map { #"{"device":"d","time":\#($0 * 60),"lat":1,"lon":2}"# }
        try (lines.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let checkpoint = directory.appendingPathComponent("state.ckpt").path
        let script = #"""
            "$0" run --triggers "$1" --checkpoint "$3" "$2" 2>"$4" | head -c 100 >/dev/null; echo "${PIPESTATUS[0]}"
            """#
        let stderrPath = directory.appendingPathComponent("stderr").path
        let result = try CLI.runShell(script, arguments: [CLI.binary.path, triggers, input, checkpoint, stderrPath])
        #expect(result.stdout == "74\n")
        let stderr = try String(contentsOfFile: stderrPath, encoding: .utf8)
        #expect(stderr.contains("fenceline: cannot write output: the reader closed the pipe"), "\(stderr)")
        #expect(stderr.contains(" readings, 0 skipped, 0 stale, "))
        #expect(!FileManager.default.fileExists(atPath: checkpoint))
    }
}
