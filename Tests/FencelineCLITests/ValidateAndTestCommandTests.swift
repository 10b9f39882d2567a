import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct ValidateAndTestCommandTests {
    @Test func validateSummarisesAGoodCatalog() throws {
        let result = try CLI.run(["validate", "Data/scenarios/real-drive-visnjan/triggers.json"])
        #expect(result.status == 0)
        #expect(result.stdout == "Data/scenarios/real-drive-visnjan/triggers.json: ok: 5 requests (5 region)\n")
    }

    @Test func validateListsEveryProblem() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("c.json")
        try Data(
            #"{"requests":[{"trigger":{"type":"timeInterval","seconds":10,"repeats":true}},{"id":"p","trigger":{"type":"region","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}}}]}"#
                .utf8
        ).write(to: catalog)
        let result = try CLI.run(["validate", catalog.path])
        #expect(result.status == 65)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0] == "\(catalog.path):1: requests[0].id: missing field \"id\"")
        // The request without an id has its interval checked too.
        #expect(
            lines[1]
                == "\(catalog.path):1: requests[0].trigger.seconds: a repeating time interval must be at least 60 seconds (got 10.0)"
        )
        #expect(
            lines[2].hasPrefix(
                "\(catalog.path):1: request \"p\": requests[1].trigger.geometry.coordinates: polygon is not valid: Self-intersection"
            ))
    }

    /// Each problem names the line of the offending value (SPEC §9), then the request id and the
    /// JSON path (SPEC §2); a missing member is located at the object that lacks it. `run` and
    /// `test` report a catalog the same way.
    @Test func catalogProblemsNameTheirLines() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("triggers.json")
        try Data(
            #"""
            {"requests": [
              {"id": "a", "trigger": {"type": "timeInterval", "seconds": 600}},
              {"id": "b", "trigger": {"type": "region",
                                      "center": {"lat": 95.0, "lon": 1.0}, "radius": 100}},
              {"id": "c", "trigger": {"type": "timeInterval", "seconds": 600}},
              {"trigger": {"type": "timeInterval", "seconds": 600}}
            ]}

            """#.utf8
        ).write(to: catalog)
        let expected = """
            \(catalog.path):4: request "b": requests[1].trigger.center: position out of range: lat must be in [-90, 90] and lon in [-180, 180] (got lat 95.0, lon 1.0)
            \(catalog.path):6: requests[3].id: missing field "id"

            """
        let validate = try CLI.run(["validate", catalog.path])
        #expect(validate.status == 65)
        #expect(validate.stdout.isEmpty)
        #expect(validate.stderr == expected)

        let run = try CLI.run(["run", "--triggers", catalog.path, "Data/scenarios/real-drive-visnjan/readings.ndjson"])
        #expect(run.status == 65)
        #expect(run.stderr == expected)

        try FileManager.default.copyItem(
            at: Fixtures.dataDirectory.appendingPathComponent("scenarios/real-drive-visnjan/readings.ndjson"),
            to: directory.appendingPathComponent("readings.ndjson"))
        let test = try CLI.run(["test", directory.path])
        #expect(test.status == 65)
        #expect(test.stderr == expected)
    }

    /// Warnings name their lines as errors do, from validate and from run.
    @Test func catalogWarningsNameTheirLines() throws {
        let catalog = try CLI.temporaryDirectory().appendingPathComponent("triggers.json")
        try Data(
            #"""
            {"requests": [
              {"id": "a", "trigger": {"type": "timeInterval", "seconds": 600}},
              {"id": "b", "trigger": {"type": "timeInterval",
                                      "second": 5, "seconds": 600}}
            ]}

            """#.utf8
        ).write(to: catalog)
        let warning =
            #"\#(catalog.path):4: warning: request "b": requests[1].trigger.second: unknown field "second" is ignored"#
        let validate = try CLI.run(["validate", catalog.path])
        #expect(validate.status == 0)
        #expect(validate.stderr == warning + "\n")
        let run = try CLI.run(["run", "--triggers", catalog.path, "-"], stdin: "")
        #expect(run.stderr.hasPrefix(warning + "\n"), "\(run.stderr)")
    }

    /// The recorded scenarios, one case each (so a failure names its scenario), with one thread
    /// and sharded across two and three.
    @Test(
        arguments: try! FileManager.default.contentsOfDirectory(
            atPath: Fixtures.dataDirectory.appendingPathComponent("scenarios").path
        ).filter { !$0.hasSuffix(".md") }.sorted())
    func bundledScenarioMatchesItsRecording(scenario: String) throws {
        for threads in ["1", "2", "3"] {
            let result = try CLI.run(["test", "Data/scenarios/\(scenario)", "--threads", threads])
            #expect(result.status == 0, "\(scenario), \(threads) threads:\n\(result.stdout)")
            #expect(result.stdout.hasPrefix("ok   Data/scenarios/\(scenario)\n"))
        }
    }

    @Test func scenarioOptionsAreChecked() throws {
        #expect(try CLI.run(["test", "Data/scenarios", "--threads", "2", "--update"]).status == 64)
        #expect(try CLI.run(["run", "--triggers", "x.json", "--threads", "0"]).status == 64)
        let stateOut = try CLI.run(["run", "--triggers", "x.json", "--threads", "2", "--state-out", "s.json"])
        #expect(stateOut.status == 64)
        #expect(stateOut.stderr.contains("--state-out needs --threads 1"))
    }

    @Test func scenarioDifferencesExit1WithADiffAndUpdateRewrites() throws {
        let directory = try CLI.temporaryDirectory()
        let scenario = directory.appendingPathComponent("demo")
        try FileManager.default.createDirectory(at: scenario, withIntermediateDirectories: true)
        for name in ["triggers.json", "readings.ndjson"] {
            try FileManager.default.copyItem(
                at: Fixtures.dataDirectory.appendingPathComponent("scenarios/real-drive-visnjan/\(name)"),
                to: scenario.appendingPathComponent(name))
        }
        let missing = try CLI.run(["test", directory.path])
        #expect(missing.status == 1)
        #expect(missing.stdout.contains("no expected.ndjson"))

        #expect(try CLI.run(["test", "--update", scenario.path]).status == 0)
        #expect(try CLI.run(["test", scenario.path]).status == 0)

        let expected = scenario.appendingPathComponent("expected.ndjson")
        var lines = try String(contentsOf: expected, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[1] = lines[1].replacingOccurrences(of: "\"exit\"", with: "\"enter\"")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: expected)
        let changed = try CLI.run(["test", scenario.path])
        #expect(changed.status == 1)
        #expect(changed.stdout.contains("FAIL \(scenario.path)"))
        #expect(changed.stdout.contains("  - {\"seq\":2"))
        #expect(changed.stdout.contains("  + {\"seq\":2"))

        // A change at the end: the diff ends with its last event, not an empty line of context;
        // groups of changes far apart are separated by an ellipsis.
        let last = lines.count - 1
        lines[last] = lines[last].replacingOccurrences(of: "\"seq\":", with: "\"seq\":1")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: expected)
        let atTheEnd = try CLI.run(["test", scenario.path])
        let diff = atTheEnd.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let block = diff.drop { !$0.hasPrefix("FAIL") }.dropFirst().prefix { $0.hasPrefix("  ") }
        #expect(block.last?.hasPrefix("  + {\"seq\":\(last + 1),") == true, "\(atTheEnd.stdout)")
        #expect(block.dropLast().last?.hasPrefix("  - {\"seq\":1\(last + 1),") == true)
        #expect(block.contains("  …"))
        #expect(!block.contains { $0.trimmingCharacters(in: .whitespaces).isEmpty })

        // Only the final newline missing: said in words.
        try Data(
            try CLI.run([
                "run", "--triggers", "\(scenario.path)/triggers.json", "--quiet",
                "\(scenario.path)/readings.ndjson",
            ]).stdout.dropLast().utf8
        ).write(to: expected)
        let unterminated = try CLI.run(["test", scenario.path])
        #expect(unterminated.status == 1)
        #expect(unterminated.stdout.contains("  \\ no newline at the end of the expected events"))
    }

    @Test func scenarioArgumentsComeFromArgsJSON() throws {
        let directory = try CLI.temporaryDirectory()
        for name in ["triggers.json", "readings.ndjson"] {
            try FileManager.default.copyItem(
                at: Fixtures.dataDirectory.appendingPathComponent("scenarios/real-drive-visnjan/\(name)"),
                to: directory.appendingPathComponent(name))
        }
        try Data(#"["--format", "text"]"#.utf8).write(to: directory.appendingPathComponent("args.json"))
        #expect(try CLI.run(["test", "--update", directory.path]).status == 0)
        let expected = try String(contentsOf: directory.appendingPathComponent("expected.ndjson"), encoding: .utf8)
        #expect(expected.hasPrefix("#1 "))
        try Data(#"["--no-such-flag"]"#.utf8).write(to: directory.appendingPathComponent("args.json"))
        #expect(try CLI.run(["test", directory.path]).status == 64)
    }
}
