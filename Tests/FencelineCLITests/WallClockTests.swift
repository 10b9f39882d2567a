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
