import Foundation

/// Writing a whole file durably: into a temporary file beside it, flushed to disk, then renamed
/// over the target (and the directory flushed), so a crash at any moment leaves either the
/// previous file whole or the new one. Checkpoints are written this way, by the CLI and by the
/// service.
package enum DurableFile {
    /// Why a write failed: what was being done and the system's reason.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package static func write(_ bytes: [UInt8], to path: String) throws(Failure) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = "\(directory)/.\(url.lastPathComponent).\(getpid()).tmp"
        func failure(_ what: String) -> Failure {
            Failure(description: "\(what): \(String(cString: strerror(errno)))")
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        var written = 0
        let complete = bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += count
            }
            return true
        }
        guard complete, fsync(descriptor) == 0 else {
            let error = failure("writing \(temporary)")
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let error = failure("renaming \(temporary)")
            unlink(temporary)
            throw error
        }
        // The rename itself is durable once the directory is flushed.
        let folder = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }
}
