import ArgumentParser
import Fenceline
import FencelineFormats
import Foundation

/// `fenceline inspect`: what a checkpoint holds.
struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a summary of a checkpoint written by run --checkpoint.",
        discussion: """
            Checks the whole file (its magic string, format version and checksum, and every part \
            of the state, as a resume reads it) and prints its \
            format version, the engine's clock, the pending requests, the devices, the timers \
            waiting, the readings held by a reorder window, the delivered notifications kept and \
            the seq the next event will get: as aligned text, or one JSON object (--format json). \
            A file that is not a checkpoint, is truncated or damaged, or has a version this build \
            cannot read exits 65 and prints nothing on standard output.

            Examples:
              fenceline inspect state.ckpt
              fenceline inspect state.ckpt --format json
            """
    )

    /// How the summary is written.
    enum Format: String, CaseIterable, ExpressibleByArgument {
        case text, json
    }

    @Argument(help: ArgumentHelp("The checkpoint file.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("text for people, or json.", valueName: "format"))
    var format: Format = .text

    func run() async throws {
        let bytes = try CheckpointFile.read(file)
        let summary = try Engine.checkpointSummary(of: bytes)
        // The whole state is read as a resume reads it, so that a file inspect passes, resumes:
        // the checksum alone passes a state damaged before it was summed.
        do {
            // Kept to the process's end, as run keeps its engine, so that exiting does not free
            // a large state piece by piece.
            _ = Unmanaged.passRetained(try Engine(resuming: bytes))
        } catch let error as CheckpointError {
            throw CommandFailure(status: ExitStatus.badInput, message: "\(file): \(error)")
        }
        let rows: [(String, String)] = [
            ("version", "\(summary.version)"),
            ("clock", summary.clock?.rfc3339 ?? "not set (no reading yet)"),
            ("requests", "\(summary.requests)"),
            ("devices", "\(summary.devices)"),
            ("pending timers", "\(summary.pendingTimers)"),
            ("held readings", "\(summary.heldReadings)"),
            ("delivered", "\(summary.delivered)"),
            ("next seq", "\(summary.nextSequence)"),
            ("size", "\(summary.bytes) bytes"),
        ]
        switch format {
        case .text:
            let text = rows.map { $0.0.padding(toLength: 16, withPad: " ", startingAt: 0) + $0.1 }
            OutputFile.standardOutput.write(text.joined(separator: "\n") + "\n")
        case .json:
            let clock = summary.clock.map { "\"\($0.rfc3339)\"" } ?? "null"
            OutputFile.standardOutput.write(
                #"{"version":\#(summary.version),"clock":\#(clock),"requests":\#(summary.requests),"devices":\#(summary.devices),"#
                    + #""pendingTimers":\#(summary.pendingTimers),"heldReadings":\#(summary.heldReadings),"#
                    + #""delivered":\#(summary.delivered),"nextSeq":\#(summary.nextSequence),"bytes":\#(summary.bytes)}"#
                    + "\n")
        }
    }
}
