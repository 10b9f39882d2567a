import Foundation

/// Refusals made before anything is opened for writing: an output that is also an input would
/// be truncated before it is read, and a checkpoint written over a device or a FIFO would replace
/// it with a regular file (the write is a rename).
enum OutputSafety {
    /// Throws (exit 64) when one of `outputs` (flag and path) names the same file as one of
    /// `inputs`; `-` among the inputs is standard input.
    static func refuseOutputsOntoInputs(_ outputs: [(flag: String, path: String?)], inputs: [String]) throws {
        for case (let flag, let path?) in outputs where path != "-" {
            guard let output = identity(of: path) else { continue }
            for input in inputs {
                let read = input == "-" ? identity(ofDescriptor: 0) : identity(of: input)
                guard let read, read == output else { continue }
                let name = input == "-" ? "standard input" : input
                throw CommandFailure(
                    status: ExitStatus.usage,
                    message: "\(flag) \(path) is also the input \(name): writing it would destroy what is to be read")
            }
        }
    }

    /// Throws (exit 64) when two of `outputs` name one file: the later write would replace the
    /// earlier (events overwritten by the checkpoint, say). Files that do not exist yet are
    /// compared by their absolute path, with symbolic links of their folders resolved.
    static func refuseSharedOutputs(_ outputs: [(flag: String, path: String?)]) throws {
        let named = outputs.compactMap { output in
            output.path.flatMap { $0.isEmpty ? nil : (output.flag, $0) }
        }
        func key(_ path: String) -> String {
            if let identity = identity(of: path) { return "inode \(identity[0]) \(identity[1])" }
            let url = URL(fileURLWithPath: path).standardizedFileURL
            return "path "
                + url.deletingLastPathComponent().resolvingSymlinksInPath()
                .appendingPathComponent(url.lastPathComponent).path
        }
        var seen: [String: (flag: String, path: String)] = [:]
        for (flag, path) in named {
            let name = key(path)
            if let earlier = seen[name] {
                throw CommandFailure(
                    status: ExitStatus.usage,
                    message: "\(earlier.flag) \(earlier.path) and \(flag) \(path) name one file: give each its own")
            }
            seen[name] = (flag, path)
        }
    }

    /// Throws (exit 74) when `path` exists and is not a regular file.
    static func refuseNonRegularCheckpoint(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG else { return }
        throw CommandFailure(
            status: ExitStatus.ioError,
            message:
                "\(path): cannot write the checkpoint: it is not a regular file (a device or a FIFO would be replaced)")
    }

    /// The device and inode of an existing file, following symbolic links.
    private static func identity(of path: String) -> [UInt64]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }

    private static func identity(ofDescriptor descriptor: Int32) -> [UInt64]? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return [UInt64(status.st_dev), UInt64(status.st_ino)]
    }
}
