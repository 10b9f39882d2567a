public import FencelineFormats
import Foundation

/// Reads a file or standard input in large chunks and hands out its lines as raw bytes.
///
/// Lines end at `\n` (a `\r` before it is dropped); the last line may lack one. No line is copied
/// unless it straddles two chunks. A line longer than ``maximumLineLength`` is reported and skipped
/// rather than grown without bound, so hostile input cannot exhaust memory.
///
/// Gzip-compressed input (a `.gz` file, or a gzip stream on standard input) is recognised by its
/// magic bytes and inflated on the fly. A compressed stream that is truncated or corrupt ends the
/// input after the lines inflated before the damage, and ``failure`` says where and why.
public final class LineReader {
    /// The name used in messages: the path, or `-` for standard input.
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// Bytes read so far from the file (compressed bytes for a gzip input), for progress.
    public var bytesRead: Int { ahead?.compressedBytes ?? inflater?.compressedBytes ?? plainBytesRead }
    private var plainBytesRead = 0
    /// Inflates a gzip input; `nil` for plain input.
    private var inflater: GzipInflater?
    /// Inflates a gzip regular file on a thread of its own, ahead of the reads.
    private var ahead: InflatingAhead?
    /// Whether the first bytes were looked at for the gzip magic.
    private var sniffed = false
    /// Plain bytes read while sniffing, handed out before anything else.
    private var pending: [UInt8] = []
    /// Whether the input is gzip-compressed (known after the first read).
    public var isCompressed: Bool { inflater != nil }
    /// Why the input ended early (a damaged compressed stream), placed after its last good line.
    public private(set) var failure: InputError?
    /// The file's size when known (regular files), for progress.
    public let size: Int?
    /// The longest line accepted, in bytes.
    public var maximumLineLength = 16 << 20
    /// Asked while a read waits (on a pipe, every tenth of a second) or is interrupted by a
    /// signal: `true` ends the input there (a run stopped by SIGINT while its input is quiet).
    public var endsOnInterruption: (() -> Bool)?
    /// Asked when ``endsOnInterruption`` says to end: `true` reads on while the pipe holds input
    /// ready (a run finishing the instant at its clock before it stops), ending only where a read
    /// would wait.
    public var readsReadyInputOnInterruption: (() -> Bool)?
    /// Whether the input ended there: an unterminated last line is then a line still being
    /// written, not the input's last, and is left unread (a resume on the rest reads it whole).
    public private(set) var wasInterrupted = false

    /// The error for line `number`, longer than ``maximumLineLength`` (which ``forEachLine(oversized:_:)``
    /// passes to its `oversized` handler).
    public func oversizedLineError(line number: Int) -> InputError {
        InputError(
            code: .lineTooLong, file: name, line: number, message: "line longer than \(maximumLineLength >> 20) MiB")
    }

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
        ahead?.stop()
        if ownsDescriptor { close(descriptor) }
    }

    /// Reads the whole input into memory (catalogs, GPX documents). A damaged compressed stream
    /// gives what was inflated before the damage, and sets ``failure``.
    ///
    /// - Parameter limit: the most bytes (inflated, for gzip) accepted: more is an error with code
    ///   `.tooLarge`, found before that much is held (an endless `/dev/zero` or a bomb is refused
    ///   in bounded memory).
    public func readAll(limit: Int = .max) throws(InputError) -> [UInt8] {
        try sniff()
        if let size, inflater == nil, size > limit { throw tooLarge(limit) }
        if inflater == nil, let size {
            // A regular file is read straight into an array of its size, after the bytes the sniff
            // already read; what is left (a file that grew meanwhile) goes through chunks below.
            var readErrno: Int32 = 0
            let head = pending
            pending = []
            let capacity = max(size, head.count) + 1
            let result = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                initialized = buffer.initialize(fromContentsOf: head)
                while initialized < buffer.count {
                    let count = read(descriptor, buffer.baseAddress! + initialized, buffer.count - initialized)
                    if count < 0 && errno == EINTR { continue }
                    if count < 0 { readErrno = errno }
                    if count <= 0 { break }
                    initialized += count
                }
            }
            plainBytesRead += result.count - head.count
            if readErrno != 0 {
                throw InputError(
                    code: .unreadable, file: name, message: "read failed: \(String(cString: strerror(readErrno)))")
            }
            guard result.count == capacity else { return result }
            return try result + readRest(limit: limit - result.count)
        }
        return try readRest(limit: limit)
    }

    /// The next bytes of content (inflated, for gzip), up to `maximum`; `nil` at the end. For a
    /// consumer that parses a document as it comes (GPX), holding one chunk at a time.
    public func nextChunk(maximum: Int = 1 << 17) throws(InputError) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: maximum)
        let count = try fill(into: &chunk, at: 0)
        guard count > 0 else { return nil }
        chunk.removeSubrange(count...)
        return chunk
    }

    private func readRest(limit: Int) throws(InputError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = try fill(into: &chunk, at: 0)
            if count == 0 { break }
            guard count <= limit - result.count else { throw tooLarge(limit) }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    private func tooLarge(_ limit: Int) -> InputError {
        let size = limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes"
        let inflated = inflater == nil ? "" : " when inflated"
        return InputError(code: .tooLarge, file: name, message: "larger than \(size)\(inflated), the most read whole")
    }

    /// Whether to read on: with ``endsOnInterruption`` set, a pipe is waited on in slices of a
    /// tenth of a second, asking between them, since it may stay quiet for ever and the signal
    /// may reach another thread than this one, leaving a plain read blocked.
    private func waitsForInput() -> Bool {
        guard let endsOnInterruption, size == nil else { return true }
        // Asked before each read too: a source that is always ready (/dev/zero, a fast pipe)
        // never lets the poll below wait.
        if endsOnInterruption() {
            guard readsReadyInputOnInterruption?() == true else { return false }
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&ready, 1, 0) > 0
        }
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&ready, 1, 100) <= 0 {
            if endsOnInterruption() { return false }
        }
        return true
    }

    /// Looks at the first bytes once: a gzip magic starts inflating; a byte order mark is dropped.
    private func sniff() throws(InputError) {
        guard !sniffed else { return }
        sniffed = true
        var head = [UInt8](repeating: 0, count: 1 << 16)
        var count = 0
        while count < 3 {
            guard waitsForInput() else { break }
            let got = head.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                throw InputError(
                    code: .unreadable, file: name, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            count += got
        }
        plainBytesRead += count
        head.removeSubrange(count...)
        if count >= 2 && head[0] == 0x1F && head[1] == 0x8B {
            do throws(InflateError) {
                let inflater = GzipInflater(descriptor: descriptor, initial: head)
                self.inflater = inflater
                // The first inflated bytes wait in `pending`, so that ``peek()`` sees content.
                var content = [UInt8](repeating: 0, count: 1 << 16)
                var thrown: InflateError?
                let got = content.withUnsafeMutableBytes { bytes in
                    do throws(InflateError) {
                        return try inflater.read(into: bytes.baseAddress!, capacity: bytes.count)
                    } catch {
                        thrown = error
                        return 0
                    }
                }
                content.removeSubrange(got...)
                pending = content
                if let thrown { throw thrown }
                if size != nil { ahead = InflatingAhead(inflater) }
            } catch {
                if inflater == nil { throw InputError(code: .unreadable, file: name, message: error.message) }
                failure = InputError(
                    code: error.isBomb ? .tooLarge : .malformed, file: name, line: 1, message: error.message)
            }
        } else {
            pending = head
        }
        // A UTF-8 byte order mark (editors on Windows write one) is not content: without this the
        // first line of an NDJSON file would be a bad line.
        if pending.starts(with: [0xEF, 0xBB, 0xBF]) { pending.removeFirst(3) }
    }

    /// The first bytes of the content (inflated when compressed) without consuming them, for
    /// telling the format; empty for empty input.
    public func peek() throws(InputError) -> [UInt8] {
        try sniff()
        return pending
    }

    /// Fills `buffer` from `offset` to its end with content; 0 at the end.
    private func fill(into buffer: inout [UInt8], at offset: Int) throws(InputError) -> Int {
        var thrown: InputError?
        let count = buffer.withUnsafeMutableBytes { bytes in
            do throws(InputError) {
                return try fill(bytes.baseAddress! + offset, bytes.count - offset)
            } catch {
                thrown = error
                return 0
            }
        }
        if let thrown { throw thrown }
        return count
    }

    /// Reads up to `capacity` bytes of content (inflated if compressed); 0 at the end. A damaged
    /// compressed stream sets ``failure`` and reads as the end.
    private func fill(_ destination: UnsafeMutableRawPointer, _ capacity: Int) throws(InputError) -> Int {
        try sniff()
        if !pending.isEmpty {
            let count = min(capacity, pending.count)
            pending.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress!, byteCount: count) }
            pending.removeFirst(count)
            return count
        }
        if let inflater {
            guard failure == nil else { return 0 }
            do throws(InflateError) {
                if let ahead { return try ahead.read(into: destination, capacity: capacity) }
                return try inflater.read(into: destination, capacity: capacity)
            } catch {
                failure = InputError(code: error.isBomb ? .tooLarge : .malformed, file: name, message: error.message)
                return 0
            }
        }
        while true {
            guard waitsForInput() else {
                wasInterrupted = true
                return 0
            }
            let count = read(descriptor, destination, capacity)
            if count < 0 && errno == EINTR {
                if let endsOnInterruption, endsOnInterruption() {
                    wasInterrupted = true
                    return 0
                }
                continue
            }
            guard count >= 0 else {
                throw InputError(
                    code: .unreadable, file: name, message: "read failed: \(String(cString: strerror(errno)))")
            }
            plainBytesRead += count
            return count
        }
    }

    /// Calls `body` with blocks of whole lines, for a consumer that splits them itself (in
    /// parallel): each block ends with a `\n` but the input's last, whose last line may lack one;
    /// `\r` is left in place. `body` gets the block and the 1-based number of its first line and
    /// returns how many lines the block held (its `\n`s, plus one for a last line without one), or
    /// `nil` to stop. A line longer than ``maximumLineLength`` is passed to `oversized` instead, in
    /// order between blocks. A block is as large as `blockSize` allows (the last may be smaller),
    /// so a pipe is read until that much has come.
    public func forEachBlock(
        blockSize: Int = 4 << 20, oversized: (Int) -> Void = { _ in },
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Int?
    ) throws {
        var buffer = [UInt8](repeating: 0, count: max(1, min(blockSize, maximumLineLength)))
        var end = 0
        var lineNumber = 0
        var skippingOversized = false
        defer { if failure != nil { failure!.line = lineNumber + 1 } }
        while true {
            var atEnd = false
            while end < buffer.count {
                let count = try fill(into: &buffer, at: end)
                if count == 0 {
                    atEnd = true
                    break
                }
                end += count
            }
            // Where the block of whole lines ends: after the last newline held.
            var blockEnd = 0
            buffer.withUnsafeBufferPointer { pointer in
                var cursor = end
                while cursor > 0 {
                    if pointer[cursor - 1] == 0x0A {
                        blockEnd = cursor
                        break
                    }
                    cursor -= 1
                }
            }
            if skippingOversized {
                // The rest of an oversized line, up to its newline, is dropped unseen.
                let newline = buffer.withUnsafeBufferPointer { pointer in
                    memchr(pointer.baseAddress!, 0x0A, end).map {
                        pointer.baseAddress!.distance(to: $0.assumingMemoryBound(to: UInt8.self))
                    }
                }
                guard let newline else {
                    end = 0
                    if atEnd {
                        if !wasInterrupted {
                            lineNumber += 1
                            oversized(lineNumber)
                        }
                        return
                    }
                    continue
                }
                lineNumber += 1
                oversized(lineNumber)
                skippingOversized = false
                buffer.withUnsafeMutableBufferPointer { pointer in
                    pointer.baseAddress!.update(from: pointer.baseAddress! + newline + 1, count: end - newline - 1)
                }
                end -= newline + 1
                blockEnd = max(0, blockEnd - newline - 1)
                if !atEnd && blockEnd == 0 { continue }
            }
            // At the end the last line may lack its newline; cut off by damage, it is the damage,
            // and cut off by an interruption, it is still being written.
            if atEnd && failure == nil && !wasInterrupted { blockEnd = end }
            if blockEnd > 0 {
                let lines = try buffer.withUnsafeBufferPointer { pointer in
                    try body(UnsafeBufferPointer(rebasing: pointer[..<blockEnd]), lineNumber + 1)
                }
                guard let lines else { return }
                lineNumber += lines
                buffer.withUnsafeMutableBufferPointer { pointer in
                    pointer.baseAddress!.update(from: pointer.baseAddress! + blockEnd, count: end - blockEnd)
                }
                end -= blockEnd
            } else if end == buffer.count {
                // No newline in a full buffer: a longer line than it holds.
                if buffer.count >= maximumLineLength {
                    skippingOversized = true
                    end = 0
                } else {
                    Self.grow(&buffer, by: min(buffer.count, maximumLineLength - buffer.count))
                }
            }
            if atEnd { return }
        }
    }

    /// Adds `count` zero bytes to `buffer` by memset, where appending a repeated zero goes element
    /// by element through generic code in a debug build (seconds for a 16 MiB line).
    private static func grow(_ buffer: inout [UInt8], by count: Int) {
        let old = buffer.count
        buffer = [UInt8](unsafeUninitializedCapacity: old + count) { storage, initialized in
            buffer.withUnsafeBufferPointer { _ = memcpy(storage.baseAddress!, $0.baseAddress!, old) }
            memset(storage.baseAddress! + old, 0, count)
            initialized = old + count
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
                    Self.grow(&buffer, by: buffer.count)
                }
            }
            let count = try fill(into: &buffer, at: end)
            let atEnd = count == 0
            end += count
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
                if atEnd && start < end && failure == nil && !wasInterrupted {
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
                } else if atEnd && skippingOversized && !wasInterrupted {
                    lineNumber += 1
                    oversized(lineNumber)
                }
                return true
            }
            if failure != nil { failure!.line = lineNumber + 1 }
            if !keepGoing || atEnd { return }
        }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Calls `body` with the bounds of each line of `start..<end`, a block of whole lines as
    /// ``LineReader/forEachBlock(blockSize:oversized:_:)`` hands out (a `\r` before the `\n` left
    /// out of the line; the last line may lack a `\n`), for the consumers that split a block
    /// themselves.
    @inline(__always)
    package func forEachLine(from start: Int = 0, to end: Int? = nil, _ body: (_ start: Int, _ end: Int) -> Void) {
        let end = end ?? count
        var cursor = start
        while cursor < end {
            let line = self.line(at: cursor, to: end)
            body(cursor, line.end)
            cursor = line.next
        }
    }

    /// The end of the line that starts at `start` (a `\r` before the `\n` left out) and where the
    /// next one starts, looking no further than `end`.
    @inline(__always)
    package func line(at start: Int, to end: Int? = nil) -> (end: Int, next: Int) {
        let end = end ?? count
        guard start < end, let base = baseAddress else { return (start, end) }
        let stop =
            memchr(base + start, 0x0A, end - start).map {
                base.distance(to: $0.assumingMemoryBound(to: UInt8.self))
            } ?? end
        return (stop > start && base[stop - 1] == 0x0D ? stop - 1 : stop, Swift.min(stop + 1, end))
    }
}
