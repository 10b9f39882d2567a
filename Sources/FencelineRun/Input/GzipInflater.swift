internal import CIsal
import FencelineFormats
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Inflates a gzip stream read from a file descriptor, for ``LineReader``: `.gz` inputs are read
/// as if they were plain (ISA-L's igzip inflates, header and CRC-32 check included; nothing here
/// is hand-written decompression).
///
/// Concatenated gzip members (as `cat a.gz b.gz` or `gzip` of appended logs make) are read one
/// after another. A stream that ends early or is corrupt stops the input with an error, after
/// every byte inflated before it (as `zcat` does).
final class GzipInflater {
    /// ISA-L's state holds its Huffman tables and a window, over 80 KiB: on the heap, once.
    private let state: UnsafeMutablePointer<inflate_state>
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
        state = .allocate(capacity: 1)
        Self.start(state)
    }

    deinit {
        state.deallocate()
    }

    /// Readies `state` for a member: its gzip header parsed and its CRC-32 and length checked.
    private static func start(_ state: UnsafeMutablePointer<inflate_state>) {
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_GZIP)
    }

    /// What went wrong, in words, for an error status of `isal_inflate`.
    private static func reason(_ status: Int32) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: "invalid deflate block"
        case ISAL_INVALID_SYMBOL: "invalid deflate code"
        case ISAL_INVALID_LOOKBACK: "a distance too far back"
        case ISAL_INVALID_WRAPPER: "invalid gzip header"
        case ISAL_UNSUPPORTED_METHOD: "the method is not deflate"
        case ISAL_INCORRECT_CHECKSUM: "the CRC-32 or length check failed"
        case ISAL_NEED_DICT: "it needs a preset dictionary"
        default: "code \(status)"
        }
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
                Self.start(state)
                memberEnded = false
            }
            var produced = 0
            let room = min(capacity, Int(UInt32.max))
            let status = input.withUnsafeMutableBufferPointer { bytes -> Int32 in
                state.pointee.next_in = bytes.baseAddress! + inputStart
                state.pointee.avail_in = UInt32(inputEnd - inputStart)
                state.pointee.next_out = destination.assumingMemoryBound(to: UInt8.self)
                state.pointee.avail_out = UInt32(room)
                // isal_inflate returns ISAL_DECOMP_OK when the input is used up, the output full or
                // the member ended (its block state then says so), or an error status (corrupt data).
                let status = isal_inflate(state)
                fenceline_vector_reset()
                inputStart = inputEnd - Int(state.pointee.avail_in)
                produced = room - Int(state.pointee.avail_out)
                return status
            }
            switch status {
            case ISAL_DECOMP_OK: memberEnded = state.pointee.block_state == ISAL_BLOCK_FINISH
            default:
                let damage = InflateError(message: "the gzip stream is corrupt (\(Self.reason(status)))")
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
/// reader, so that a run's parse and engine do not wait for inflation in turn. What the thread inflates, and the damage it meets, reach the
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
            var damage: InflateError?
            // Inflated straight into the chunk's storage, which is never zeroed first.
            let bytes = [UInt8](unsafeUninitializedCapacity: Self.chunkSize) { buffer, filled in
                while filled < buffer.count {
                    do throws(InflateError) {
                        let count = try inflater.read(
                            into: buffer.baseAddress! + filled, capacity: buffer.count - filled)
                        if count == 0 {
                            ended = true
                            return
                        }
                        filled += count
                    } catch {
                        damage = error
                        ended = true
                        return
                    }
                }
            }
            let chunk = Chunk(bytes: bytes, compressedBytes: inflater.compressedBytes, end: ended, damage: damage)
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
