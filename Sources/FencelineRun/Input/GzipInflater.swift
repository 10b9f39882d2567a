internal import CZlib
import FencelineFormats
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Inflates a gzip stream read from a file descriptor, for ``LineReader``: `.gz` inputs are read
/// as if they were plain (zlib is the library made for this; nothing here is hand-written
/// decompression).
///
/// Concatenated gzip members (as `cat a.gz b.gz` or `gzip` of appended logs make) are read one
/// after another. A stream that ends early or is corrupt stops the input with an error, after
/// every byte inflated before it (as `zcat` does).
final class GzipInflater {
    private var stream = z_stream()
    private let descriptor: Int32
    private var input: [UInt8]
    private var inputStart = 0
    private var inputEnd: Int
    private var sawEnd = false
    private var memberEnded = false
    private var finished = false
    /// Damage found by the call that also inflated the bytes before it: those are returned first,
    /// the damage on the next call (a bad checksum is found after a member's last bytes).
    private var pendingDamage: InflateError?
    /// Compressed bytes consumed from the descriptor.
    private(set) var compressedBytes = 0
    /// Bytes inflated so far.
    private var inflatedBytes = 0

    /// A stream inflating to more than this many times its compressed size, past
    /// ``bombThreshold`` bytes, is refused as a decompression bomb: real readings compress about
    /// ten to fifty-fold, a run of one byte a thousand-fold.
    static let bombRatio = 200
    static let bombThreshold = 64 << 20

    /// Starts inflating: `initial` holds the bytes already read from `descriptor` (its magic).
    init(descriptor: Int32, initial: [UInt8]) throws(InflateError) {
        self.descriptor = descriptor
        input = initial + [UInt8](repeating: 0, count: max(0, (1 << 16) - initial.count))
        inputEnd = initial.count
        // inflateInit2_ returns Z_OK, or an error code when memory or the zlib version is wrong;
        // 15 + 16 asks for a gzip wrapper and the largest window.
        let status = inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw InflateError(message: "cannot start zlib (code \(status))") }
    }

    deinit {
        // inflateEnd frees the stream's state; its status is of no use here.
        inflateEnd(&stream)
    }

    /// Fills `destination` with up to `capacity` inflated bytes; 0 means the end of the input.
    func read(into destination: UnsafeMutableRawPointer, capacity: Int) throws(InflateError) -> Int {
        if let pendingDamage { throw pendingDamage }
        while !finished {
            if inputStart == inputEnd {
                if !sawEnd {
                    try refill()
                    continue
                }
                guard memberEnded else {
                    throw InflateError(message: "the gzip stream is truncated (it ends inside compressed data)")
                }
                finished = true
                break
            }
            if memberEnded {
                // What follows a member is another member, or zero padding (tape blocks), which
                // ends the input quietly. Anything else (readings appended to a .gz file) would be
                // lost without a word: it is reported, as `gzip -t` does.
                guard input[inputStart] == 0x1F else {
                    finished = true
                    if input[inputStart..<inputEnd].contains(where: { $0 != 0 }) {
                        throw InflateError(
                            message:
                                "\(inputEnd - inputStart) bytes after the end of the gzip stream are not gzip data (appended lines?)"
                        )
                    }
                    break
                }
                // inflateReset returns Z_OK unless the stream state is broken.
                guard inflateReset(&stream) == Z_OK else { throw InflateError(message: "cannot restart zlib") }
                memberEnded = false
            }
            var produced = 0
            let status = input.withUnsafeMutableBufferPointer { bytes -> Int32 in
                stream.next_in = bytes.baseAddress! + inputStart
                stream.avail_in = UInt32(inputEnd - inputStart)
                stream.next_out = destination.assumingMemoryBound(to: UInt8.self)
                stream.avail_out = UInt32(capacity)
                // inflate returns Z_OK on progress, Z_STREAM_END at a member's end, Z_BUF_ERROR when it
                // needs more input, or an error code (corrupt data) with stream.msg set.
                let status = inflate(&stream, Z_NO_FLUSH)
                inputStart = inputEnd - Int(stream.avail_in)
                produced = capacity - Int(stream.avail_out)
                return status
            }
            switch status {
            case Z_OK, Z_BUF_ERROR: break
            case Z_STREAM_END: memberEnded = true
            default:
                let reason = stream.msg.map { String(cString: $0) } ?? "code \(status)"
                let damage = InflateError(message: "the gzip stream is corrupt (\(reason))")
                guard produced > 0 else { throw damage }
                pendingDamage = damage
            }
            inflatedBytes += produced
            if inflatedBytes > Self.bombThreshold && inflatedBytes / Self.bombRatio > compressedBytes {
                pendingDamage = InflateError(
                    message:
                        "the gzip stream inflates over \(Self.bombRatio) times its size (\(compressedBytes >> 10) KiB to over \(inflatedBytes >> 20) MiB): refused as a decompression bomb",
                    isBomb: true)
            }
            if produced > 0 { return produced }
        }
        return 0
    }

    private func refill() throws(InflateError) {
        inputStart = 0
        inputEnd = 0
        while true {
            let count = input.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw InflateError(message: "read failed: \(String(cString: strerror(errno)))")
            }
            compressedBytes += count
            inputEnd = count
            if count == 0 { sawEnd = true }
            return
        }
    }
}

/// Why a gzip input could not be read on.
struct InflateError: Error {
    var message: String
    /// Refused for its size rather than damaged.
    var isBomb = false
}

/// Inflates a regular file's gzip stream on a thread of its own, a few chunks ahead of its
/// reader: zlib inflates about as fast as a run parses and applies the lines, so in turn the two
/// took twice as long as either. What the thread inflates, and the damage it meets, reach the
/// reader in order. Only for regular files: a read never blocks there, so ``stop()`` returns at
/// once.
final class InflatingAhead: @unchecked Sendable {
    /// Inflated bytes, with the compressed bytes read by then; the last has `end` set (and the
    /// damage that ended the stream, if any).
    private struct Chunk {
        var bytes: [UInt8]
        var compressedBytes: Int
        var end = false
        var damage: InflateError?
    }

    private let inflater: GzipInflater
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var ready: [Chunk] = []
    private var stopped = false
    private var running = true
    /// The reader's side: the chunk it reads from and how far.
    private var current = Chunk(bytes: [], compressedBytes: 0)
    private var offset = 0
    /// Compressed bytes read by the time of the bytes handed out, for progress: atomic, since a
    /// live run reads on a thread of its own while its progress meter asks from the run's.
    var compressedBytes: Int { progressBytes.load(ordering: .relaxed) }
    private let progressBytes: Atomic<Int>

    private static let chunkSize = 1 << 20
    private static let chunksAhead = 4

    init(_ inflater: GzipInflater) {
        self.inflater = inflater
        progressBytes = Atomic(inflater.compressedBytes)
        let thread = Thread { [self] in inflateAll() }
        thread.name = "fenceline-inflate"
        thread.start()
    }

    private func inflateAll() {
        var ended = false
        while !ended {
            var chunk = Chunk(bytes: [UInt8](repeating: 0, count: Self.chunkSize), compressedBytes: 0)
            var filled = 0
            do throws(InflateError) {
                while filled < Self.chunkSize {
                    var thrown: InflateError?
                    let count = chunk.bytes.withUnsafeMutableBytes { bytes -> Int in
                        do throws(InflateError) {
                            return try inflater.read(into: bytes.baseAddress! + filled, capacity: bytes.count - filled)
                        } catch {
                            thrown = error
                            return 0
                        }
                    }
                    if let thrown { throw thrown }
                    if count == 0 {
                        chunk.end = true
                        break
                    }
                    filled += count
                }
            } catch {
                chunk.end = true
                chunk.damage = error
            }
            ended = chunk.end
            chunk.bytes.removeSubrange(filled...)
            chunk.compressedBytes = inflater.compressedBytes
            condition.lock()
            while ready.count >= Self.chunksAhead && !stopped { condition.wait() }
            if stopped { ended = true }
            ready.append(chunk)
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        running = false
        condition.broadcast()
        condition.unlock()
    }

    /// Fills `destination` with up to `capacity` inflated bytes; 0 at the end, after which the
    /// damage that ended the stream is thrown, once.
    func read(into destination: UnsafeMutableRawPointer, capacity: Int) throws(InflateError) -> Int {
        while offset == current.bytes.count {
            if current.end {
                if let damage = current.damage {
                    current.damage = nil
                    throw damage
                }
                return 0
            }
            condition.lock()
            while ready.isEmpty { condition.wait() }
            current = ready.removeFirst()
            condition.broadcast()
            condition.unlock()
            offset = 0
            progressBytes.store(current.compressedBytes, ordering: .relaxed)
        }
        let count = min(capacity, current.bytes.count - offset)
        current.bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
        offset += count
        return count
    }

    /// Stops the thread and waits for it, so that the file can be closed.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }
}
