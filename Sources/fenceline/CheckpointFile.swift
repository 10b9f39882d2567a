import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Synchronization

/// Reading and writing checkpoint files (SPEC §10).
enum CheckpointFile {
    /// The bytes of the checkpoint at `path`, checked: a missing file exits 66, one that is not a
    /// checkpoint (or of another version, or damaged) 65, both naming the file.
    static func read(_ path: String) throws -> [UInt8] {
        // The header says how long the file is: anything else (`/dev/zero`, a log) is refused
        // before it is read whole.
        let bytes: [UInt8]
        let reader: LineReader
        let head: [UInt8]
        do throws(InputError) {
            reader = try LineReader(path: path)
            head = try reader.peek()
        } catch {
            throw CommandFailure(error)
        }
        let size: Int
        do {
            size = try Engine.checkpointSize(fromHead: head)
        } catch {
            throw CommandFailure(status: ExitStatus.badInput, message: "\(path): \(error)")
        }
        do throws(InputError) {
            bytes = try reader.readAll(limit: size)
            if let failure = reader.failure { throw failure }
        } catch  where error.code == .tooLarge {
            throw CommandFailure(
                status: ExitStatus.badInput,
                message: "\(path): checkpoint is damaged: the file is longer than its header says")
        } catch {
            throw CommandFailure(error)
        }
        do {
            _ = try Engine.checkpointSummary(of: bytes)
        } catch {
            throw CommandFailure(status: ExitStatus.badInput, message: "\(path): \(error)")
        }
        return bytes
    }

    /// Writes `bytes` to `path` atomically (``DurableFile``): a crash at any moment leaves either
    /// the previous checkpoint whole or the new one.
    static func write(_ bytes: [UInt8], to path: String) throws {
        do {
            try DurableFile.write(bytes, to: path)
        } catch {
            throw CommandFailure(
                status: ExitStatus.ioError, message: "\(path): cannot write the checkpoint: \(error.description)")
        }
    }
}

/// SIGINT and SIGTERM during a run that writes a checkpoint: the run stops after the line at hand
/// (on NDJSON and CSV, at the end of that line's instant: see `RunOutput.stopping`) and ends
/// normally, writing its events and the checkpoint (SPEC §10).
enum StopSignals {
    /// Set by the handler, read by the run after each line.
    private static let received = Atomic<Bool>(false)

    /// Whether SIGINT or SIGTERM has arrived since ``install()``.
    static var wasReceived: Bool { received.load(ordering: .relaxed) }

    /// Replaces the default action (ending the process) with setting ``wasReceived``. Without
    /// `SA_RESTART`, a read from a quiet pipe returns at once, so the run notices.
    static func install() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in StopSignals.received.store(true, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
    }
}
