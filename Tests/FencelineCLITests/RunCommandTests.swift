import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct RunCommandTests {
    let demo = [
        "run", "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json",
        "Data/scenarios/real-drive-visnjan/readings.ndjson",
    ]

    @Test func demoRunWritesEventsAndASummary() throws {
        let result = try CLI.run(demo)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 10)
        #expect(
            lines.first?.hasPrefix(
                #"{"seq":1,"time":"2020-12-18T06:17:23Z","request":"main-road","device":"car","trigger":"region","event":"enter""#
            ) == true)
        #expect(result.stderr == "fenceline: 104 readings, 0 skipped, 0 stale, 10 events\n")
    }

    /// The hidden `--timings` line Tools/bench reads: the readings after the first (every one with
    /// `--threads`), and wall and CPU seconds; the events are unchanged.
    @Test(arguments: ["1", "2"]) func timingsReportTheStreamingPhase(threads: String) throws {
        let plain = try CLI.run(demo + ["--quiet"])
        let timed = try CLI.run(demo + ["--quiet", "--timings", "--threads", threads])
        #expect(timed.status == 0)
        #expect(timed.stdout == plain.stdout)
        let words = timed.stderr.split(separator: " ")
        #expect(timed.stderr.hasPrefix("fenceline: timings: "))
        #expect(words.count == 14)
        guard words.count == 14 else { return }
        // With threads the stretch takes in every reading of the first batch, the catalog's time
        // left out of it; with one thread it starts after the first reading, which adds the catalog.
        #expect(Int(words[2]) == (threads == "1" ? 103 : 104))
        #expect(words[3...7].joined(separator: " ") == "readings after the first in")
        #expect((Double(words[8]) ?? -1) >= 0)
        #expect((Double(words[11]) ?? -1) >= 0)
        #expect(words[12...].joined(separator: " ") == "s CPU\n")
        #expect(!(try CLI.run(["run", "--help"])).stdout.contains("timings"))
    }

    @Test func sameInputGivesByteIdenticalOutput() throws {
        let first = try CLI.run(demo)
        let second = try CLI.run(demo)
        #expect(first.stdout == second.stdout)
        #expect(!first.stdout.isEmpty)
    }

    /// `FENCELINE_LOG_LEVEL` reaches the engines of a `--threads` run too: a device's message from
    /// whichever engine holds it, a request's once (every engine applies the same change).
    @Test(arguments: ["1", "2"]) func logLevelReachesEveryEngine(threads: String) throws {
        let input = """
            {"device":"van","time":"2026-03-02T08:00:05Z","lat":52.37,"lon":4.89}
            {"device":"van","time":"2026-03-02T08:00:01Z","lat":52.37,"lon":4.89}
            {"time":"2026-03-02T08:00:06Z","op":"add","request":{"id":"home","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":50}}}

            """
        let result = try CLI.run(
            ["run", "--threads", threads, "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json", "-"],
            stdin: input, environment: ["FENCELINE_LOG_LEVEL": "trace"])
        #expect(result.status == 0)
        let lines = result.stderr.split(separator: "\n")
        #expect(
            lines.filter { $0.contains("stale reading") && $0.contains("device=van") }.count == 1, "\(result.stderr)")
        #expect(lines.filter { $0.contains("replaced request") && $0.contains("request=home") }.count == 1)
    }

    /// Times outside 0000-01-01T00:00:00Z…9999-12-31T23:59:59Z are located errors, in a catalog,
    /// a control record, a reading or an option; nothing traps (a 13-digit Unix time used to
    /// overflow, a start of 1e13 to kill the run).
    @Test func timesOutsideTheRepresentableRangeAreLocatedErrors() throws {
        let directory = try CLI.temporaryDirectory()
        let cases = [
            (#""seconds":60,"start":1e13"#, "requests[0].trigger.start: 10000000000000.0 Unix seconds is outside"),
            (#""seconds":990000000000,"start":9.2e12"#, "requests[0].trigger.seconds: seconds must be a number > 0"),
            (#""seconds":300000000000,"start":"9000-01-01T00:00:00Z""#, "start + seconds falls after 9999-12-31"),
        ]
        for (fields, message) in cases {
            let catalog = directory.appendingPathComponent("c.json")
            try Data(#"{"requests":[{"id":"x","trigger":{"type":"timeInterval",\#(fields)}}]}"#.utf8).write(to: catalog)
            let result = try CLI.run(["validate", catalog.path])
            #expect(result.status == 65, "\(fields)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
        let empty = directory.appendingPathComponent("empty.json")
        try Data(#"{"requests":[]}"#.utf8).write(to: empty)
        let lines = [
            #"{"device":"a","time":9999999999999,"lat":1,"lon":2}"#,
            #"{"device":"a","time":-9999999999999,"lat":1,"lon":2}"#,
            #"{"device":"a","time":1e13,"lat":1,"lon":2}"#,
            #"{"device":"a","time":"0000-01-01T00:00:00+01:00","lat":1,"lon":2}"#,
            #"{"time":1,"op":"add","request":{"id":"x","trigger":{"type":"timeInterval","seconds":60,"start":1e13}}}"#,
            #"{"device":"a","time":253402300799,"lat":1,"lon":2}"#,
        ]
        let run = try CLI.run(["run", "--triggers", empty.path, "-"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(run.status == 0)
        #expect(run.stderr.hasSuffix("fenceline: 1 reading, 5 skipped, 0 stale, 0 events\n"), "\(run.stderr)")
        #expect(run.stderr.contains(#"-:1: field "time": Unix seconds outside the representable range"#))
        #expect(run.stderr.contains(#"-:5: field "request.trigger.start""#))
        #expect(try CLI.run(["run", "--triggers", empty.path, "--until", "1e13", "/dev/null"]).status == 64)
    }

    /// A negative number given to a numeric option is checked and named, not taken for another
    /// option ("Missing value").
    @Test func negativeNumbersReachTheOptionsChecks() throws {
        let catalog = "Data/scenarios/real-drive-visnjan/triggers.json"
        for (option, message) in [
            ("--max-errors", "--max-errors must be ≥ 0"), ("--threads", "--threads must be in 1…64"),
            ("--delivered-limit", "--delivered-limit must be ≥ 1"),
            ("--reorder-window", "--reorder-window must be a number of seconds ≥ 0"),
        ] {
            let result = try CLI.run(["run", "--triggers", catalog, option, "-3", "/dev/null"])
            #expect(result.status == 64, "\(option)")
            #expect(result.stderr.hasPrefix("Error: \(message)"), "\(result.stderr)")
        }
    }

    @Test func standardInputGivesTheSameEventsAsTheFile() throws {
        let readings = try String(
            contentsOf: Fixtures.dataDirectory.appendingPathComponent("scenarios/real-drive-visnjan/readings.ndjson"),
            encoding: .utf8)
        let piped = try CLI.run(
            ["run", "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json", "-"], stdin: readings)
        #expect(piped.status == 0)
        #expect(piped.stdout == (try CLI.run(demo)).stdout)
    }

    @Test func badLinesAreReportedWithFileLineAndField() throws {
        let directory = try CLI.temporaryDirectory()
        let readings = directory.appendingPathComponent("bad.ndjson")
        try Data(
            """
            {"device":"car","time":"2020-12-18T06:15:50Z","lat":45.2735,"lon":13.7142}
            {"device":"car","time":"2020-12-18T06:15:51Z","lat":"north","lon":13.7142}
            {"device":"car","time":"2020-12-18T06:17:05Z","lat":45.272525,"lon":13.712455}
            {"device":"car","time":
            {"device":"car","time":"2020-12-18T06:17:30Z","lat":45.272525,"lon":13.712455}
            """.utf8
        ).write(to: readings)
        let lenient = try CLI.run([
            "run", "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json", readings.path,
        ])
        #expect(lenient.status == 0)
        #expect(
            lenient.stderr == """
                \(readings.path):2: field "lat": expected a number, found a string
                \(readings.path):4: field "time": expected an RFC 3339 string or Unix seconds, found end of line
                fenceline: 3 readings, 2 skipped, 0 stale, 1 event

                """)
        #expect(lenient.stdout.contains(#""request":"home","device":"car","trigger":"region","event":"exit""#))

        let strict = try CLI.run([
            "run", "--strict", "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json", readings.path,
        ])
        #expect(strict.status == 65)
        #expect(strict.stdout.isEmpty)
        #expect(strict.stderr.hasPrefix("\(readings.path):2: field \"lat\""))
    }

    @Test func strictKeepsTheEventsBeforeTheBadLine() throws {
        let directory = try CLI.temporaryDirectory()
        let readings = directory.appendingPathComponent("trace.ndjson")
        let good = try String(
            contentsOf: Fixtures.dataDirectory.appendingPathComponent("scenarios/real-drive-visnjan/readings.ndjson"),
            encoding: .utf8)
        try Data((good + "oops\n").utf8).write(to: readings)
        let result = try CLI.run([
            "run", "--strict", "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json", readings.path,
        ])
        #expect(result.status == 65)
        #expect(result.stdout.split(separator: "\n").count == 10)
        #expect(result.stderr.contains("\(readings.path):105: expected a JSON object, found 'o'"))
    }

    @Test func invalidCatalogWritesNothingAndExits65() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("bad.json")
        try Data(
            #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52,"lon":4},"radius":-1}},{"id":"x","trigger":{"type":"nope"}}]}"#
                .utf8
        ).write(to: catalog)
        let result = try CLI.run([
            "run", "--triggers", catalog.path, "Data/scenarios/real-drive-visnjan/readings.ndjson",
        ])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr == """
                \(catalog.path):1: request "gate": requests[0].trigger.radius: radius must be a number of metres > 0 (got -1.0)
                \(catalog.path):1: request "x": requests[1].trigger.type: unknown trigger type "nope"; expected "region", "beacon", "proximity", "timeInterval" or "calendar"

                """)
    }

    @Test func missingFilesExit66() throws {
        let catalog = try CLI.run([
            "run", "--triggers", "nope.json", "Data/scenarios/real-drive-visnjan/readings.ndjson",
        ])
        #expect(catalog.status == 66)
        #expect(catalog.stderr.hasPrefix("nope.json: cannot open: No such file or directory"))
        let readings = try CLI.run([
            "run", "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json", "missing.ndjson",
        ])
        #expect(readings.status == 66)
        #expect(readings.stdout.isEmpty)
        #expect(readings.stderr.hasPrefix("missing.ndjson: cannot open"))
    }

    @Test func directoriesAndUnwritableOutputAreErrors() throws {
        // Found by fuzzing: a directory exited 65, and a full disk lost every event with exit 0.
        let directory = try CLI.run(["run", "--triggers", "Data/scenarios/real-drive-visnjan/triggers.json", "Data"])
        #expect(directory.status == 66)
        #expect(directory.stderr.hasPrefix("Data: is a directory"))
        let full = try CLI.run(demo + ["-o", "/dev/full"])
        #expect(full.status == 74)
        #expect(full.stderr.contains("cannot write output: No space left on device"))
    }

    @Test func usageErrorsExit64() throws {
        let bare = try CLI.run([])
        #expect(bare.status == 64)
        #expect(bare.stderr.contains("SUBCOMMANDS"))
        #expect(try CLI.run(["run"]).status == 64)
        #expect(try CLI.run(["run", "--triggers", "x.json", "--frobnicate"]).status == 64)
        #expect(try CLI.run(["run", "--triggers", "x.json", "--format", "xml"]).status == 64)
        #expect(try CLI.run(["run", "--triggers", "x.json", "--reorder-window", "-3"]).status == 64)
        // Found by fuzzing: values beyond the clock's range were a crash.
        #expect(try CLI.run(["run", "--triggers", "x.json", "--reorder-window", "1e15"]).status == 64)
        #expect(try CLI.run(["run", "--triggers", "x.json", "--until", "1e18"]).status == 64)
    }

    /// run, explain and render share their input options, checks included.
    @Test(arguments: [["run"], ["explain", "--device", "d", "--request", "r"], ["render"]])
    func sharedInputOptionsAreCheckedAlike(command: [String]) throws {
        let negative = try CLI.run(command + ["--triggers", "x.json", "--reorder-window=-3"])
        #expect(negative.status == 64)
        #expect(negative.stderr.contains("--reorder-window must be a number of seconds ≥ 0"))
        let help = try CLI.run([command[0], "--help"])
        for option in ["--triggers <file>", "<readings>", "--input-format <format>", "--until <time>"] {
            #expect(help.stdout.contains(option), "\(command[0]): \(option)")
        }
    }

    @Test func textFormatAndOutputFile() throws {
        let directory = try CLI.temporaryDirectory()
        let output = directory.appendingPathComponent("events.txt")
        let result = try CLI.run(demo + ["--format", "text", "-o", output.path])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        let text = try String(contentsOf: output, encoding: .utf8)
        #expect(text.split(separator: "\n").count == 10)
        #expect(text.contains("dwell         olive-grove"))
    }

    /// Each example can be copied as printed: none is wrapped at 80 columns (a wrapped line
    /// goes on at the margin), the repository's files it names exist, and those that read only
    /// such files and write nothing run as printed from the repository's root.
    @Test(arguments: [
        ["--help"], ["run", "--help"], ["validate", "--help"], ["test", "--help"], ["next", "--help"],
        ["readings", "--help"], ["explain", "--help"], ["render", "--help"], ["inspect", "--help"],
        ["serve", "--help"],
    ])
    func helpExplainsEachCommandWithExamples(arguments: [String]) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: fenceline"))
        guard arguments.count == 2 else { return }
        let examples = try #require(result.stdout.components(separatedBy: "Examples:\n").dropFirst().first)
            .components(separatedBy: "\n\n")[0]
            .split(separator: "\n")
        #expect(!examples.isEmpty)
        var commands: [String] = []
        var continued = ""
        for line in examples {
            #expect(line.hasPrefix("  "), "\(arguments[0]): \(line)")
            for word in line.split(separator: " ") where word.hasPrefix("Data/") {
                let path = Fixtures.packageRoot.appendingPathComponent(String(word)).path
                #expect(FileManager.default.fileExists(atPath: path), "\(arguments[0]): \(word)")
            }
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasSuffix("\\") {
                continued += text.dropLast()
            } else {
                commands.append(continued + text)
                continued = ""
            }
        }
        for command in commands
        where command.hasPrefix("fenceline ") && command.contains(" Data/") && !command.hasPrefix("fenceline test")
            && !command.contains(where: { "|<>\"".contains($0) }) && !command.contains(" -o ")
        {
            let words = command.split(separator: " ").dropFirst().map(String.init)
            let ran = try CLI.run(words)
            #expect(ran.status == 0, "\(command): \(ran.stderr)")
            #expect(!ran.stdout.isEmpty, "\(command)")
        }
    }
}
