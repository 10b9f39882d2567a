import ArgumentParser
import FencelineFormats
import FencelineRun
import Foundation
import Logging
import Synchronization

/// The `fenceline` command: subcommands over the engine and its formats.
@main
struct FencelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fenceline",
        abstract: "Evaluate location, beacon, time and calendar triggers over streams of readings.",
        discussion: """
            Fenceline brings the UserNotifications model (requests with content and a trigger, \
            pending and delivered notifications) to streams of GPS and BLE readings. It runs on \
            event time: the same input always gives the same events.

            Exit codes: 0 ok, 1 scenario differences (test), 64 usage, 65 bad input \
            (an invalid catalog, or a bad line under --strict), 66 a file is missing or cannot \
            be opened, 74 output cannot be written.
            """,
        subcommands: [
            Run.self, Readings.self, Explain.self, Render.self, Validate.self, Next.self, ScenarioTest.self,
            Inspect.self, Serve.self,
        ],
        defaultSubcommand: nil
    )

    /// Without a subcommand there is nothing to do: the help goes to stderr and it is a usage error.
    func run() async throws {
        OutputFile.standardError.write(Self.helpMessage() + "\n")
        throw ExitStatus.usage
    }

    static func main() async {
        AllocatorTuning.configureForBatchWork()
        signal(SIGPIPE, SIG_IGN)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel =
                ProcessInfo.processInfo.environment["FENCELINE_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
                ?? .warning
            return handler
        }
        if let message = invalidArgumentMessage() {
            OutputFile.report(message)
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            if OutputFile.failed.load(ordering: .relaxed) { Foundation.exit(ExitStatus.ioError.rawValue) }
        } catch let failure as CommandFailure {
            OutputFile.report(failure.message)
            Foundation.exit(failure.status)
        } catch {
            exit(withError: error)
        }
    }
}

extension FencelineCommand {
    /// The complaint about the first argument that is not valid UTF-8, or `nil`. Swift repairs such
    /// bytes to U+FFFD before the parser sees them, which would make two different device names
    /// (or paths) one, so they are refused while the raw bytes can still be read.
    static func invalidArgumentMessage() -> String? {
        var arguments: [[UInt8]] = []
        for index in 0..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { break }
            arguments.append(
                pointer.withMemoryRebound(to: UInt8.self, capacity: strlen(pointer) + 1) { bytes in
                    Array(UnsafeBufferPointer(start: bytes, count: strlen(pointer)))
                })
        }
        for index in arguments.indices.dropFirst() where String(validating: arguments[index], as: UTF8.self) == nil {
            let previous: String = index > 1 ? String(decoding: arguments[index - 1], as: UTF8.self) : ""
            let what = previous.hasPrefix("-") ? "the value of \(previous)" : "argument \(index)"
            return "fenceline: \(what) is not valid UTF-8; names are compared byte for byte, so it cannot be repaired"
        }
        return nil
    }
}

/// The exit statuses of SPEC §9.
enum ExitStatus {
    static let differences = ExitCode(1)
    static let usage = ExitCode(64)
    static let badInput = ExitCode(65)
    static let fileMissing = ExitCode(66)
    /// Output could not be written (EX_IOERR).
    static let ioError = ExitCode(74)
}
