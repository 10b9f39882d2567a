import Foundation
import TestSupport
import Testing

/// `run --checkpoint`, `run --resume` and `inspect` through the binary (SPEC §10).
@Suite(.serialized) struct CheckpointCommandTests {
    let scenario = "Data/scenarios/real-drive-visnjan"

    /// The scenario's readings split into two files at line `cut`, in a fresh folder.
    func split(at cut: Int) throws -> (directory: URL, first: String, second: String, lines: [String]) {
        let directory = try CLI.temporaryDirectory()
        let lines = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("\(scenario)/readings.ndjson"), encoding: .utf8
        ).split(separator: "\n").map(String.init)
        let first = directory.appendingPathComponent("first.ndjson").path
        let second = directory.appendingPathComponent("second.ndjson").path
        try Data(lines[..<cut].map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: first))
        try Data(lines[cut...].map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: second))
        return (directory, first, second, lines)
    }

    @Test func twoRunsThroughACheckpointWriteWhatOneRunWrites() throws {
        let whole = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson"])
        let (directory, first, second, _) = try split(at: 47)
        let state = directory.appendingPathComponent("drive.ckpt").path
        let head = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", first, "--checkpoint", state])
        #expect(head.status == 0)
        #expect(head.stderr == "fenceline: 47 readings, 0 skipped, 0 stale, 5 events\n")
        // --triggers is optional on resume.
        let tail = try CLI.run(["run", "--resume", state, second])
        #expect(tail.status == 0)
        #expect(head.stdout + tail.stdout == whole.stdout)
        // With --threads the checkpointing run uses one engine, says so, and writes the same.
        let threaded = try CLI.run([
            "run", "--triggers", "\(scenario)/triggers.json", first, "--checkpoint", state, "--threads", "2",
        ])
        #expect(threaded.stdout == head.stdout)
        #expect(threaded.stderr.hasPrefix("fenceline: note: --checkpoint and --resume run on one engine"))
        // With the same catalog given again its requests go on as they were.
        let again = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", "--resume", state, second])
        #expect(again.stdout == tail.stdout)
        // Text output too, and no temporary file is left beside the checkpoint.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                == ["drive.ckpt", "first.ndjson", "second.ndjson"])
    }

    /// With a reorder window a checkpoint keeps the fixes still held whole: a line the fast path
    /// reads keeps its speed, heading and altitude there as one the full decoder reads does (a
    /// run without a window only checks them, since nothing after it reads them).
    @Test func heldFixesKeepTheirMotionWhicheverDecoderReadThem() throws {
        let directory = try CLI.temporaryDirectory()
        let lines = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("\(scenario)/readings.ndjson"), encoding: .utf8
        ).split(separator: "\n").prefix(60)
        // Even lines in the usual tracker order (matched byte by byte), odd ones with the extras
        // after the altitude (read member by member); the other file adds a member with a
        // non-ASCII string, which leaves every line to the full decoder.
        var fast = ""
        var full = ""
        for (index, line) in lines.enumerated() {
            let motion = #""speed":\#(Double(index % 30) + 0.25),"heading":\#(index * 7 % 360)"#
            let fields = line.dropLast()
            let written =
                index.isMultiple(of: 2)
                ? fields.replacingOccurrences(of: #","altitude":"#, with: ",\(motion),\"altitude\":")
                    + #","battery":80,"source":"gps"}"#
                : fields + ",\(motion)}"
            #expect(written.contains(#""speed":"#) && written.contains(#""altitude":"#))
            fast += written + "\n"
            full += written.dropLast() + #","note":"é"}"# + "\n"
        }
        var states: [Data] = []
        for (name, text) in [("fast", fast), ("full", full)] {
            let input = directory.appendingPathComponent("\(name).ndjson").path
            let state = directory.appendingPathComponent("\(name).ckpt").path
            try Data(text.utf8).write(to: URL(fileURLWithPath: input))
            let result = try CLI.run([
                "run", "--triggers", "\(scenario)/triggers.json", input, "--reorder-window", "600", "--checkpoint",
                state,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            states.append(try Data(contentsOf: URL(fileURLWithPath: state)))
        }
        #expect(states[0] == states[1])
    }

    /// An output that is also an input, or another output, is refused before anything is opened
    /// for writing; a checkpoint may replace the one it resumed (a batch that goes on each night).
    @Test func outputsThatAreInputsAreRefusedButACheckpointMayReplaceItsOwn() throws {
        let (directory, first, second, _) = try split(at: 47)
        let triggers = "\(scenario)/triggers.json"
        for arguments in [["-o", first], ["--state-out", first], ["--checkpoint", first], ["-o", triggers]] {
            let result = try CLI.run(["run", "--triggers", triggers, first] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains("is also the input"))
        }
        #expect(try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n").count == 47)
        // Two outputs onto one file, existing or not (the later would replace the earlier).
        let shared = directory.appendingPathComponent("out.ndjson").path
        for arguments in [
            ["-o", shared, "--checkpoint", shared],
            ["--state-out", shared, "--checkpoint", "\(directory.path)/./out.ndjson"],
            ["-o", shared, "--state-out", shared],
        ] {
            let result = try CLI.run(["run", "--triggers", triggers, first] + arguments)
            #expect(result.status == 64 && result.stderr.contains("name one file"), "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: shared), "nothing is written")
        }
        // `-` names a file here (only inputs read it as standard input), the same one for both.
        let dashes = try CLI.run(
            ["run", "--triggers", "\(Fixtures.packageRoot.path)/\(triggers)", first, "-o", "-", "--state-out", "-"],
            in: directory)
        #expect(
            dashes.status == 64 && !FileManager.default.fileExists(atPath: "\(directory.path)/-"), "\(dashes.stderr)")
        FileManager.default.createFile(atPath: shared, contents: Data())
        #expect(try CLI.run(["run", "--triggers", triggers, first, "-o", shared, "--checkpoint", shared]).status == 64)
        let state = directory.appendingPathComponent("nightly.ckpt").path
        let head = try CLI.run(["run", "--triggers", triggers, first, "--checkpoint", state])
        let tail = try CLI.run(["run", "--resume", state, second, "--checkpoint", state])
        #expect(tail.status == 0)
        let whole = try CLI.run(["run", "--triggers", triggers, "\(scenario)/readings.ndjson"])
        #expect(head.stdout + tail.stdout == whole.stdout)
        #expect(try CLI.run(["inspect", state]).stdout.contains("next seq        11\n"))
        #expect(try CLI.run(["run", "--resume", state, second, "-o", state]).status == 64)
    }

    /// The delivered list does not depend on the order fences were evaluated in (which a resumed
    /// engine's rebuilt index changes): a cut run's `--state-out` is the whole run's, with
    /// `--delivered-limit 1` keeping the same notification. Three overlapping circles, one replaced.
    @Test(arguments: ["1", "64"]) func aResumedRunDeliversInTheSameOrder(limit: String) throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("overlap.json")
        try Data(
            #"""
            {"requests":[
             {"id":"scoped","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":300,"initial":"state"}},
             {"id":"acc","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150,"hysteresis":"naive"}},
             {"id":"dw","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":120}}]}
            """#.utf8
        ).write(to: catalog)
        let first = directory.appendingPathComponent("first.ndjson")
        try Data(
            (#"{"time":"2026-03-02T08:00:35.500Z","op":"add","request":{"id":"dw","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":80,"hysteresis":{"preset":"naive","maxAccuracy":10}}}}"#
                + "\n" + #"{"device":"a","time":"2026-03-02T08:00:37.500Z","lat":52.374,"lon":4.8905,"accuracy":5}"#
                + "\n").utf8
        ).write(to: first)
        let second = directory.appendingPathComponent("second.ndjson")
        try Data(
            (#"{"device":"a","time":"2026-03-02T08:01:31.500Z","lat":52.37,"lon":4.8905,"accuracy":5}"# + "\n").utf8
        )
        .write(to: second)
        let whole = directory.appendingPathComponent("whole.json").path
        let cut = directory.appendingPathComponent("cut.json").path
        let state = directory.appendingPathComponent("s.ckpt").path
        let options = ["--delivered-limit", limit, "--quiet"]
        _ = try CLI.run(["run", "--triggers", catalog.path, first.path, second.path, "--state-out", whole] + options)
        _ = try CLI.run(["run", "--triggers", catalog.path, first.path, "--checkpoint", state] + options)
        _ = try CLI.run(["run", "--resume", state, second.path, "--state-out", cut] + options)
        #expect(try Data(contentsOf: URL(fileURLWithPath: cut)) == Data(contentsOf: URL(fileURLWithPath: whole)))
    }

    /// Checkpoints of earlier format versions (1: before attachments and responses; 2: before
    /// position filters; 3: before proximity pairs; 4: before held readings' leads), kept in
    /// `Data/checkpoints/v1` … `v4`, resume to exactly the rest of their scenario's expected output.
    @Test(arguments: [1, 2, 3, 4]) func checkpointsOfEarlierVersionsResume(version: Int) throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Data/checkpoints/v\(version)")
        let cuts = try String(contentsOf: folder.appendingPathComponent("cuts.tsv"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: "\t").map(String.init) }
        #expect(cuts.count == 4)
        for cut in cuts {
            let (name, line, written) = (cut[0], Int(cut[1])!, Int(cut[2])!)
            let scenario = Fixtures.packageRoot.appendingPathComponent("Data/scenarios/\(name)")
            let readings = try String(contentsOf: scenario.appendingPathComponent("readings.ndjson"), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            let rest = try CLI.temporaryDirectory().appendingPathComponent("rest.ndjson")
            try Data(readings[line...].joined(separator: "\n").utf8).write(to: rest)
            let state = folder.appendingPathComponent("\(name).ckpt").path
            let inspect = try CLI.run(["inspect", state])
            #expect(inspect.stdout.hasPrefix("version         \(version)\n"), "\(name)")
            let format =
                name.hasPrefix("apns-output") || name.hasPrefix("attachments-apns") ? ["--format", "apns"] : []
            let resumed = try CLI.run(["run", "--resume", state, rest.path, "--quiet"] + format)
            #expect(resumed.status == 0, "\(name): \(resumed.stderr)")
            // Given its catalog again, the run recognises every request (their digests are those
            // format 1 kept) and adds none afresh.
            let again = try CLI.run(
                ["run", "--resume", state, "--triggers", "\(scenario.path)/triggers.json", rest.path, "--quiet"]
                    + format)
            #expect(again.stdout == resumed.stdout, "\(name): --triggers changed the resumed run")
            let expected = try String(contentsOf: scenario.appendingPathComponent("expected.ndjson"), encoding: .utf8)
                .split(separator: "\n").dropFirst(written).map { $0 + "\n" }.joined()
            // Formats before 3 kept no visit counts: a stay open at the cut is numbered afresh and
            // timed from the checkpoint's clock. Everything else is exactly the uninterrupted run's.
            #expect(Self.withoutStays(resumed.stdout) == Self.withoutStays(expected), "\(name)")
            if version >= 3 { #expect(resumed.stdout == expected, "\(name)") }
            // A stay timed from the checkpoint's clock is no longer than the uninterrupted run's
            // (which saw its enter), and one begun after the cut is as long.
            let durations = { (text: String) in text.matches(of: /"duration":([0-9.]+)/).map { Double($0.1)! } }
            let (timed, whole) = (durations(resumed.stdout), durations(expected))
            #expect(timed.count == whole.count, "\(name)")
            #expect(zip(timed, whole).allSatisfy { $0 >= 0 && $0 <= $1 }, "\(name): \(timed) against \(whole)")
            if expected.contains("\"reason\":") { #expect(resumed.stdout.contains("\"reason\":"), "\(name)") }
        }
    }

    /// NDJSON events (or APNs lines) without `reason`, `visit` and `duration`.
    static func withoutStays(_ text: String) -> String {
        text.replacing(/,"reason":"[a-z]+"/, with: "").replacing(/,"visit":"[^"]*"/, with: "")
            .replacing(/,"duration":[0-9.]+/, with: "").replacing(/"reason":"[a-z]+",?/, with: "")
    }

    @Test func inspectSummarisesACheckpoint() throws {
        let (directory, first, _, _) = try split(at: 47)
        let state = directory.appendingPathComponent("drive.ckpt").path
        #expect(
            try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", first, "--checkpoint", state]).status == 0)
        let text = try CLI.run(["inspect", state])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("version         5\nclock           2020-12-18T06:18:39Z\nrequests        5\n"))
        #expect(text.stdout.contains("devices         1\npending timers  "))
        #expect(text.stdout.contains("next seq        6\n"))
        let json = try CLI.run(["inspect", state, "--format", "json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect(object["version"] as? Int == 5)
        #expect(object["clock"] as? String == "2020-12-18T06:18:39Z")
        #expect(object["requests"] as? Int == 5)
        #expect(object["devices"] as? Int == 1)
        #expect(object["nextSeq"] as? Int == 6)
        #expect(object["pendingTimers"] is Int && object["heldReadings"] as? Int == 0)
    }

    /// `inspect` reads the state as a resume does: a file whose state is damaged behind a good
    /// checksum, which `run --resume` refuses, `inspect` refuses too.
    @Test func inspectRefusesWhatAResumeRefuses() throws {
        let (directory, first, second, _) = try split(at: 47)
        let state = directory.appendingPathComponent("drive.ckpt").path
        #expect(
            try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", first, "--checkpoint", state]).status == 0)
        let good = Array(try Data(contentsOf: URL(fileURLWithPath: state)))
        let forged = directory.appendingPathComponent("forged.ckpt").path
        var refused = false
        for position in stride(from: ForgedCheckpoint.headerLength + 64, to: good.count, by: 7) where !refused {
            var damaged = good
            damaged[position] = 0xFF
            try Data(ForgedCheckpoint.resealed(damaged)).write(to: URL(fileURLWithPath: forged))
            let resumed = try CLI.run(["run", "--resume", forged, second])
            refused = resumed.status == 65 && resumed.stderr.contains("damaged")
        }
        #expect(refused, "no forged state was refused")
        let inspected = try CLI.run(["inspect", forged])
        #expect(inspected.status == 65, "\(inspected.stdout)")
        #expect(inspected.stdout.isEmpty && inspected.stderr.hasPrefix("\(forged): "), "\(inspected.stderr)")
    }

    /// A truncated, altered, foreign or future-version file: exit 65, a message naming the file,
    /// nothing on standard output; a missing one exits 66.
    @Test func damagedOrForeignCheckpointsAreRefused() throws {
        let (directory, first, second, _) = try split(at: 47)
        let state = directory.appendingPathComponent("drive.ckpt")
        #expect(
            try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", first, "--checkpoint", state.path]).status
                == 0)
        let good = Array(try Data(contentsOf: state))
        var cases: [(String, [UInt8], String)] = [
            ("truncated", Array(good.dropLast(10)), "truncated"),
            ("foreign", Array("{\"requests\":[]}".utf8), "not a Fenceline checkpoint"),
            ("empty", [], "not a Fenceline checkpoint"),
        ]
        var altered = good
        altered[altered.count / 2] ^= 0x10
        cases.append(("altered", altered, "checksum"))
        var future = good
        future[21] = 9
        cases.append(("future", future, "version 9"))
        for (name, bytes, message) in cases {
            let path = directory.appendingPathComponent("\(name).ckpt").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            for arguments in [["run", "--resume", path, second], ["inspect", path]] {
                let result = try CLI.run(arguments)
                #expect(result.status == 65, "\(name): \(arguments[0])")
                #expect(result.stdout.isEmpty, "\(name): \(arguments[0])")
                #expect(result.stderr.hasPrefix("\(path): ") && result.stderr.contains(message), "\(result.stderr)")
            }
        }
        #expect(try CLI.run(["run", "--resume", "no-such.ckpt", second]).status == 66)
        #expect(try CLI.run(["run", second]).status == 64)  // neither --triggers nor --resume
        #expect(
            try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", "--checkpoint", "-", first]).status == 64)
    }

    /// A signal that comes while a fleet's readings share a second: the run reads on to the end
    /// of that instant and stops before the first line of the next, so the checkpoint is taken
    /// between two times and resuming on the rest gives, after the first run's output, exactly
    /// the output of one run (a stop within the instant would have closed it early).
    @Test func aSignalAmongReadingsOfOneSecondStopsAtTheSecondsEnd() async throws {
        let directory = try CLI.temporaryDirectory()
        var generator = SplitMix(state: 11)
        var lines: [String] = []
        for index in 0..<30_000 {
            let device = Int.random(in: 0..<3_000, using: &generator)
            let longitude = 4.89 + Double.random(in: -0.004...0.004, using: &generator)
            lines.append(
                #"{"device":"v\#(device)","time":\#(1_772_438_400 + index / 1_500),"lat":52.37,"lon":\#(longitude)}"#)
        }
        let readings = directory.appendingPathComponent("fleet.ndjson")
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: readings)
        let catalog = directory.appendingPathComponent("catalog.json")
        try Data(
            #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150,"hysteresis":"naive"}},{"id":"yard","trigger":{"type":"region","center":{"lat":52.37,"lon":4.892},"radius":120,"hysteresis":"naive"}}]}"#
                .utf8
        )
        .write(to: catalog)
        let whole = try CLI.run(["run", "--triggers", catalog.path, readings.path])
        let state = directory.appendingPathComponent("state.ckpt").path
        let (process, outURL, errURL) = try CLI.start(
            ["run", "--triggers", catalog.path, readings.path, "--checkpoint", state], in: directory)
        // Once events come out the run is reading (and its signal handler set); a debug build
        // takes seconds over the whole file.
        for _ in 0..<200 where (try? FileManager.default.attributesOfItem(atPath: outURL.path)[.size] as? Int) ?? 0 == 0
        {
            try await Task.sleep(for: .milliseconds(25))
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let errors = try String(contentsOf: errURL, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(errors)")
        let read = Int(errors.split(separator: " ")[1]) ?? -1
        #expect(read % 1_500 == 0 && read < lines.count, "stopped at the end of a second: \(errors)")
        let head = try String(contentsOf: outURL, encoding: .utf8)
        let rest = directory.appendingPathComponent("rest.ndjson")
        try Data(lines[read...].map { $0 + "\n" }.joined().utf8).write(to: rest)
        let tail = try CLI.run(["run", "--resume", state, rest.path])
        #expect(head + tail.stdout == whole.stdout)
    }

    /// SIGINT or SIGTERM during a run with --checkpoint: it stops after the line at hand, writes
    /// the events and the checkpoint and exits 0; resuming on the lines it did not apply goes on
    /// exactly (the summary line says how many it read). A line half written when the signal
    /// comes is left unread, not taken for a bad line (so --strict too exits 0).
    @Test(arguments: [SIGINT, SIGTERM]) func aSignalStopsTheRunWithACheckpoint(signal: Int32) async throws {
        let (directory, _, _, lines) = try split(at: 1)
        let whole = try CLI.run(["run", "--triggers", "\(scenario)/triggers.json", "\(scenario)/readings.ndjson"])
        let state = directory.appendingPathComponent("stopped.ckpt").path
        let input = Pipe()
        // --until is for a run that reads its input to the end: an interrupted one must not apply it.
        let (process, outURL, errURL) = try CLI.start(
            [
                "run", "--triggers", "\(scenario)/triggers.json", "--checkpoint", state, "--until",
                "2020-12-18T09:00:00Z", "--strict", "-",
            ], in: directory, stdin: input)
        // Half the lines, then silence: the run waits for more until the signal.
        input.fileHandleForWriting.write(Data((lines[..<60].map { $0 + "\n" }.joined() + lines[60].prefix(20)).utf8))
        try await Task.sleep(for: .seconds(1))
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        let errors = try String(contentsOf: errURL, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(errors)")
        let read = Int(errors.split(separator: " ")[1]) ?? -1
        #expect(read == 60, "\(errors)")
        let head = try String(contentsOf: outURL, encoding: .utf8)
        let tail = try CLI.run(["run", "--resume", state, "-"], stdin: lines[read...].map { $0 + "\n" }.joined())
        #expect(head + tail.stdout == whole.stdout)
        try? input.fileHandleForWriting.close()
    }

    /// SIGKILL at random moments of a run writing over an existing checkpoint: the file is always
    /// either the old checkpoint, whole, or the new one, never a mixture or a stub.
    @Test func aKilledRunLeavesTheOldCheckpointOrTheNewOneWhole() throws {
        let directory = try CLI.temporaryDirectory()
        var generator = SplitMix(state: 9)
        var text = ""
        for index in 0..<60_000 {
            let device = Int.random(in: 0..<20_000, using: &generator)
            let longitude = 4.89 + Double.random(in: -0.004...0.004, using: &generator)
            text +=
                #"{"device":"v\#(device)","time":\#(1_772_438_400 + index / 10),"lat":52.37,"lon":\#(longitude)}"#
                + "\n"
        }
        let readings = directory.appendingPathComponent("many.ndjson")
        try Data(text.utf8).write(to: readings)
        let catalog = directory.appendingPathComponent("catalog.json")
        try Data(
            #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":150}}]}"#
                .utf8
        )
        .write(to: catalog)
        // The old checkpoint is of a shorter run, so the new one differs from it.
        let start = directory.appendingPathComponent("start.ndjson")
        try Data(text.split(separator: "\n").prefix(1000).map { $0 + "\n" }.joined().utf8).write(to: start)
        let state = directory.appendingPathComponent("state.ckpt")
        #expect(
            try CLI.run(["run", "--triggers", catalog.path, start.path, "--checkpoint", state.path, "--quiet"])
                .status == 0)
        let old = try Data(contentsOf: state)
        var kept = 0
        var replaced = 0
        for attempt in 0..<12 {
            try old.write(to: state)
            let process = Process()
            process.executableURL = CLI.binary
            process.arguments = [
                "run", "--triggers", catalog.path, readings.path, "--checkpoint", state.path, "--quiet",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: Double(attempt) * 0.06)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let now = try Data(contentsOf: state)
            if now == old {
                kept += 1
            } else {
                replaced += 1
                #expect(try CLI.run(["inspect", state.path]).status == 0, "attempt \(attempt): a damaged checkpoint")
            }
        }
        #expect(kept + replaced == 12)
        #expect(kept > 0, "every run finished before it was killed: kill sooner")
    }
}
