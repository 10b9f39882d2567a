import Foundation

/// Reads a file or standard input in large chunks and hands out its lines as raw bytes.
///
/// Lines end at `\n` (a `\r` before it is dropped); the last line may lack one. No line is copied
/// unless it straddles two chunks. A line longer than ``maximumLineLength`` is reported and skipped
/// rather than grown without bound, so hostile input cannot exhaust memory.
public final class LineReader {
    /// The name used in messages: the path, or `-` for standard input.
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// Bytes read so far, for progress.
    public private(set) var bytesRead = 0
    /// The file's size when known (regular files), for progress.
    public let size: Int?
    /// The longest line accepted, in bytes.
    public var maximumLineLength = 16 << 20

    /// Opens `path` (`-` is standard input).
    /// - Throws: ``InputError`` with code `fileMissing` or `unreadable`.
    public init(path: String) throws(InputError) {
        name = path
        if path == "-" {
            descriptor = 0
            ownsDescriptor = false
            size = nil
            return
        }
        let opened = open(path, O_RDONLY)
        guard opened >= 0 else {
            let reason = String(cString: strerror(errno))
            throw InputError(
                code: errno == ENOENT ? .fileMissing : .unreadable, file: path, message: "cannot open: \(reason)")
        }
        var status = stat()
        if fstat(opened, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            close(opened)
            throw InputError(code: .unreadable, file: path, message: "is a directory, not a file")
        }
        descriptor = opened
        ownsDescriptor = true
        size = (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : nil
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Reads the whole input into memory (for catalogs).
    public func readAll() throws(InputError) -> [UInt8] {
        // A regular file is read straight into an array of its size; what is left (a pipe, or a
        // file that grew meanwhile) goes through a chunk.
        var failure: Int32 = 0
        var result = [UInt8](unsafeUninitializedCapacity: (size ?? 0) + 1) { buffer, initialized in
            while initialized < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + initialized, buffer.count - initialized)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failure = errno }
                if count <= 0 { break }
                initialized += count
            }
        }
        bytesRead += result.count
        if failure != 0 {
            throw InputError(
                code: .unreadable, file: name, message: "read failed: \(String(cString: strerror(failure)))")
        }
        guard result.count == (size ?? 0) + 1 else { return result }  // end of input reached
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw InputError(
                    code: .unreadable, file: name, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return result }
            bytesRead += count
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Calls `body` with each line and its 1-based number; `body` returns `false` to stop.
    /// Lines that are too long are passed to `oversized` instead.
    public func forEachLine(
        oversized: (Int) -> Void = { _ in },
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Bool
    ) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var start = 0
        var end = 0
        var lineNumber = 0
        var skippingOversized = false
        while true {
            if start > 0 && start == end {
                start = 0
                end = 0
            }
            if end == buffer.count {
                if start > 0 {
                    buffer.withUnsafeMutableBufferPointer { pointer in
                        let moved = end - start
                        pointer.baseAddress!.update(from: pointer.baseAddress! + start, count: moved)
                    }
                    end -= start
                    start = 0
                } else if buffer.count >= maximumLineLength {
                    // The current line is too long: drop what we have and skip to its end.
                    skippingOversized = true
                    end = 0
                } else {
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))
                }
            }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + end, $0.count - end) }
            if count < 0 {
                if errno == EINTR { continue }
                throw InputError(
                    code: .unreadable, file: name, message: "read failed: \(String(cString: strerror(errno)))")
            }
            bytesRead += max(0, count)
            let atEnd = count == 0
            end += max(0, count)
            let keepGoing = try buffer.withUnsafeBufferPointer { pointer -> Bool in
                var cursor = start
                while cursor < end {
                    guard let newline = memchr(pointer.baseAddress! + cursor, 0x0A, end - cursor) else { break }
                    let stop = pointer.baseAddress!.distance(to: newline.assumingMemoryBound(to: UInt8.self))
                    lineNumber += 1
                    if skippingOversized {
                        skippingOversized = false
                        oversized(lineNumber)
                    } else {
                        let trimmed = stop > start && pointer[stop - 1] == 0x0D ? stop - 1 : stop
                        if try !body(UnsafeBufferPointer(rebasing: pointer[start..<trimmed]), lineNumber) {
                            return false
                        }
                    }
                    cursor = stop + 1
                    start = cursor
                }
                if atEnd && start < end {
                    lineNumber += 1
                    if skippingOversized {
                        oversized(lineNumber)
                    } else {
                        let trimmed = pointer[end - 1] == 0x0D ? end - 1 : end
                        if try !body(UnsafeBufferPointer(rebasing: pointer[start..<trimmed]), lineNumber) {
                            return false
                        }
                    }
                    start = end
                } else if atEnd && skippingOversized {
                    lineNumber += 1
                    oversized(lineNumber)
                }
                return true
            }
            if !keepGoing || atEnd { return }
        }
    }
}
