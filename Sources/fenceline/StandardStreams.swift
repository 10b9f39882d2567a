import ArgumentParser
import FencelineFormats
import Foundation

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

    private init(descriptor: Int32, ownsDescriptor: Bool) {
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
    }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    // A reader that went away (EPIPE) ends the output quietly, like other Unix tools.
                    if errno == EPIPE { exit(0) }
                    // Events that cannot be written must not pass for a good run (found by fuzzing).
                    guard descriptor != 2 else { return }
                    let reason = String(cString: strerror(errno))
                    _ = "fenceline: cannot write output: \(reason)\n".withCString {
                        Foundation.write(2, $0, strlen($0))
                    }
                    exit(ExitStatus.ioError.rawValue)
                }
                offset += written
            }
        }
    }

    func write(_ text: String) {
        write(Array(text.utf8))
    }

    func close() {
        if ownsDescriptor { _ = Foundation.close(descriptor) }
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
