import ArgumentParser
import FencelineFormats
import FencelineRun
import Foundation
import Synchronization

/// Unbuffered writes to a file descriptor that survive partial writes and a closed pipe.
struct OutputFile {
    let descriptor: Int32
    let ownsDescriptor: Bool

    static let standardOutput = OutputFile(descriptor: 1, ownsDescriptor: false)
    static let standardError = OutputFile(descriptor: 2, ownsDescriptor: false)

    /// Creates or truncates `path` for writing.
    init(path: String) throws {
        let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard opened >= 0 else {
            throw CommandFailure(
                status: ExitStatus.fileMissing, message: "\(path): cannot write: \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        ownsDescriptor = true
    }

    /// `path` opened as ``init(path:)`` does, or standard output for `-`, as Unix tools read it.
    static func opening(_ path: String) throws -> OutputFile {
        path == "-" ? .standardOutput : try OutputFile(path: path)
    }

    private init(descriptor: Int32, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
    }

    /// Writes all of `bytes`. A failure (a full disk; a reader that closed the pipe, as `| head`
    /// does) is reported once, later writes are dropped, and the run stops as if its input had
    /// ended (see ``failed``): the command then prints its summary and exits 74, for events that
    /// were not written must not pass for a good run.
    func write(_ bytes: [UInt8]) {
        guard descriptor == 2 || !Self.failed.load(ordering: .relaxed) else { return }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    // stderr has nowhere to report its own failure.
                    guard descriptor != 2 else { return }
                    Self.noteFailure(errno == EPIPE ? "the reader closed the pipe" : String(cString: strerror(errno)))
                    return
                }
                offset += written
            }
        }
    }

    /// Whether a write to an output (not stderr) has failed.
    static let failed = Atomic<Bool>(false)

    private static func noteFailure(_ reason: String) {
        guard !failed.exchange(true, ordering: .relaxed) else { return }
        report("fenceline: cannot write output: \(reason)")
    }

    func write(_ text: String) {
        write(Array(text.utf8))
    }

    func close() {
        if ownsDescriptor { _ = Foundation.close(descriptor) }
    }
}

extension OutputFile {
    /// Writes diagnostic lines to stderr with their control characters escaped: they quote input
    /// (device names, ids, values), which must not drive the terminal.
    static func report(_ text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).terminalSafe }
        standardError.write(lines.joined(separator: "\n") + "\n")
    }
}

extension RunPipeline {
    /// The most events `render` and `explain` keep in memory: past it the picture or the
    /// explanation says nothing a person could read, and memory would run out first.
    static let inMemoryEventLimit = 250_000
}

extension CommandFailure {
    /// A run stopped at ``RunPipeline/inMemoryEventLimit``.
    static func eventLimit(command: String) -> CommandFailure {
        CommandFailure(
            status: ExitStatus.badInput,
            message:
                "fenceline: \(command) stopped after \(RunPipeline.inMemoryEventLimit) events (a far --until or a jump of the "
                + "clock past a repeating timer?); it keeps every event in memory: give a nearer --until, or use run")
    }
}

/// A failure the CLI reports on stderr before exiting with `status`.
struct CommandFailure: Error, CustomStringConvertible {
    var status: Int32
    var message: String

    init(status: ArgumentParser.ExitCode, message: String) {
        self.status = status.rawValue
        self.message = message
    }

    /// An input that could not be read: exit 66 when it is missing or unreadable, 65 otherwise.
    init(_ error: InputError) {
        self.init(
            status: error.code == .fileMissing || error.code == .unreadable
                ? ExitStatus.fileMissing : ExitStatus.badInput,
            message: error.description)
    }

    var description: String { message }
}
