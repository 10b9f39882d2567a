public import Foundation

/// Where tests write their files: one directory per test process under the system's temporary
/// directory, removed when the process exits, since a test run makes thousands of files and
/// service stores.
public enum Scratch {
    /// This process's directory, made on first use (with the directories of test processes that
    /// are gone, say killed, removed first).
    public static let root: URL = {
        let manager = FileManager.default
        let base = manager.temporaryDirectory
        let prefix = "fenceline-scratch-"
        for name in (try? manager.contentsOfDirectory(atPath: base.path)) ?? [] where name.hasPrefix(prefix) {
            // Only a name of this form, `<pid>-<UUID>`: nothing else is taken for a dead process's.
            let rest = name.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]),
                UUID(uuidString: String(rest[rest.index(after: dash)...])) != nil
            else { continue }
            if pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                try? manager.removeItem(at: base.appendingPathComponent(name))
            }
        }
        let root = base.appendingPathComponent("\(prefix)\(getpid())-\(UUID().uuidString)")
        try? manager.createDirectory(at: root, withIntermediateDirectories: true)
        rootPath = root.path
        atexit { if let rootPath = Scratch.rootPath { try? FileManager.default.removeItem(atPath: rootPath) } }
        return root
    }()

    /// The root's path for the exit handler, which cannot capture it.
    nonisolated(unsafe) private static var rootPath: String?
}
