import Foundation
import TestSupport
import Testing

/// `--clock wall`: with stdin still open and silent, timers fire as the wall clock passes them.
@Suite struct WallClockTests {
    @Test func exitFiresWhileTheInputIsSilent() throws {
        let directory = try CLI.temporaryDirectory()
        let catalog = directory.appendingPathComponent("wall.json")
        try Data(
            #"{"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100,"hysteresis":{"exitDelay":1}}}]}"#
                .utf8
        )
        .write(to: catalog)
        let outURL = directory.appendingPathComponent("stdout")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["run", "--triggers", catalog.path, "--clock", "wall", "--quiet", "-"]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        try process.run()
        let now = Date().timeIntervalSince1970
        input.fileHandleForWriting.write(
            Data(
                """
                {"device":"d","time":\(now),"lat":52.37,"lon":4.89}
                {"device":"d","time":\(now + 0.1),"lat":52.38,"lon":4.89}

                """.utf8))
        // The exit is due 1.1 s after `now`; the input stays open and silent meanwhile.
        var output = ""
        let deadline = Date().addingTimeInterval(6)
        while Date() < deadline && !output.contains(#""event":"exit""#) {
            Thread.sleep(forTimeInterval: 0.2)
            output = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        }
        let elapsed = Date().timeIntervalSince1970 - now
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(output.contains(#""event":"exit""#))
        #expect(elapsed < 5)
        #expect(process.terminationStatus == 0)
    }
}

/// SPEC §12 `maxFuture` on the wall clock: with `--clock wall` a line's lead is measured from the
/// wall clock, so even the first line is refused when stamped too far ahead (on the event clock
/// the first line never is), in `run` and in the service.
@Suite struct WallClockFutureTests {
    static let catalog =
        #"{"defaults":{"filters":{"maxFuture":60}},"requests":[{"id":"gate","trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"radius":100}}]}"#

    static func lines(now: Double) -> String {
        """
        {"device":"d","time":\(now + 3600),"lat":52.37,"lon":4.89}
        {"device":"d","time":\(now),"lat":52.37,"lon":4.89}

        """
    }

    @Test func runRefusesALineAheadOfTheWallClock() throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = directory.appendingPathComponent("future.json")
        try Data(Self.catalog.utf8).write(to: triggers)
        let readings = directory.appendingPathComponent("readings.ndjson")
        try Data(Self.lines(now: Date().timeIntervalSince1970).utf8).write(to: readings)
        let wall = try CLI.run(["run", "--triggers", triggers.path, "--clock", "wall", readings.path])
        #expect(wall.stderr.contains("readings.ndjson:1: field \"time\": future time: 3"), "\(wall.stderr)")
        #expect(wall.stderr.contains(" s ahead of the wall clock ("), "\(wall.stderr)")
        // The line moved nothing; the one at the wall clock's time was read.
        #expect(wall.stderr.contains("fenceline: 1 reading, 1 skipped"), "\(wall.stderr)")
        // On the event clock the first line sets the clock; the second is then an hour behind it.
        let event = try CLI.run(["run", "--triggers", triggers.path, readings.path])
        #expect(!event.stderr.contains("future time"), "\(event.stderr)")
    }

    @Test func theServiceRefusesALineAheadOfTheWallClock() throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = directory.appendingPathComponent("future.json")
        try Data(Self.catalog.utf8).write(to: triggers)
        let server = try ServiceCommandTests.Server(triggers: triggers.path, arguments: ["--clock", "wall"])
        defer { server.stop() }
        let answer = try server.call(
            "POST", "/v1/readings", body: Self.lines(now: Date().timeIntervalSince1970),
            headers: ["Content-Type: application/x-ndjson"])
        #expect(answer.status == 200)
        #expect(answer.body.contains(#""accepted":1"#), "\(answer.body)")
        #expect(
            answer.body.contains(#""line":1"#) && answer.body.contains("s ahead of the wall clock"), "\(answer.body)")
    }
}

/// `serve --clock wall` with no device reporting: the first tick sets the clock, so a time
/// trigger given at start, and one put while the service runs, fire on the wall clock.
@Suite struct WallClockWithoutReadingsTests {
    @Test func timeTriggersFireBeforeAnyReading() async throws {
        let directory = try CLI.temporaryDirectory()
        let triggers = directory.appendingPathComponent("timers.json")
        try Data(#"{"requests":[{"id":"start","trigger":{"type":"timeInterval","seconds":1}}]}"#.utf8).write(
            to: triggers)
        let server = try ServiceCommandTests.Server(triggers: triggers.path, arguments: ["--clock", "wall"])
        defer { server.stop() }
        let put = try server.call(
            "PUT", "/v1/requests/later", body: #"{"trigger":{"type":"timeInterval","seconds":1}}"#)
        #expect(put.status == 201, "\(put.body)")
        var log = ""
        for _ in 0..<40 where !(log.contains(#""request":"start""#) && log.contains(#""request":"later""#)) {
            try await Task.sleep(for: .milliseconds(250))
            log = try server.call("GET", "/v1/events").body
        }
        #expect(log.contains(#""request":"start""#) && log.contains(#""event":"fire""#), "\(log)")
        #expect(log.contains(#""request":"later""#), "\(log)")
        let export = try server.call("GET", "/v1/export").body
        #expect(export.contains(#""op":"tick"}"#), "the ticks are journaled: \(export.prefix(300))")
    }
}
