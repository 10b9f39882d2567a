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
    /// The member's header as read so far: kept across calls, since a header may arrive in pieces
    /// (ISA-L's own header reading inside `isal_inflate` starts afresh on every call).
    private var header = isal_gzip_header()
    private var inHeader = true
    private let descriptor: Int32
    private var input: [UInt8]
    private var inputStart = 0
    private var inputEnd: Int
    /// Output inflated ahead of a small read: ISA-L inflates into a window of its own and copies
    /// out only what fits, and on damage drops what did not fit, so it is never handed less than
    /// ``minimumRoom``; a smaller read is served from here.
    private var staged: [UInt8] = []
    private var stagedStart = 0
    private var stagedEnd = 0
    private var sawEnd = false
    private var memberEnded = false
    private var finished = false
    /// Damage found by the call that also inflated the bytes before it: those are returned first,
    /// the damage on the next call (a bad checksum is found after a member's last bytes).
    private var pendingDamage: InflateError?
    /// Compressed bytes read from the descriptor, the sniffed head included (progress compares
    /// them with the file's size; the bomb check with what they inflate to).
    private(set) var compressedBytes: Int
    /// Bytes inflated so far.
    private var inflatedBytes = 0

    /// A stream inflating to more than this many times its compressed size, past
    /// ``bombThreshold`` bytes, is refused as a decompression bomb: real readings compress about
    /// ten to fifty-fold, a run of one byte a thousand-fold.
    static let bombRatio = 200
    static let bombThreshold = 64 << 20
    /// More than ISA-L's own window holds (two histories and a look-ahead, about 64 KiB).
    static let minimumRoom = 128 << 10

    /// Starts inflating: `initial` holds the bytes already read from `descriptor` (its magic).
    init(descriptor: Int32, initial: [UInt8]) {
        self.descriptor = descriptor
        input = initial + [UInt8](repeating: 0, count: max(0, (1 << 16) - initial.count))
        inputEnd = initial.count
        compressedBytes = initial.count
        state = .allocate(capacity: 1)
        // Zeroed, so that nothing ISA-L hands out for a corrupt stream can depend on what the heap
        // held: before this a long fuzz run read one corrupt file two ways and got different bytes.
        UnsafeMutableRawPointer(state).initializeMemory(
            as: UInt8.self, repeating: 0, count: MemoryLayout<inflate_state>.size)
        startMember()
    }

    deinit {
        state.deallocate()
    }

    /// Readies the state for a member: its header read by ``header``, then its deflate data
    /// inflated and the CRC-32 and length after it checked.
    private func startMember() {
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_GZIP_NO_HDR_VER)
        isal_gzip_header_init(&header)
        inHeader = true
    }

    /// What went wrong, in words, for an error status of `isal_inflate` or, with `inHeader`, of
    /// `isal_read_gzip_header`.
    private static func reason(_ status: Int32, inHeader: Bool) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: "invalid deflate block"
        case ISAL_INVALID_SYMBOL: "invalid deflate code"
        case ISAL_INVALID_LOOKBACK: "a distance too far back"
        case ISAL_INVALID_WRAPPER: "invalid gzip header"
        case ISAL_UNSUPPORTED_METHOD: "the method is not deflate"
        case ISAL_INCORRECT_CHECKSUM:
            inHeader ? "the header's CRC-16 check failed" : "the CRC-32 or length check failed"
        case ISAL_NEED_DICT: "it needs a preset dictionary"
        default: "code \(status)"
        }
    }

    /// Fills `destination` with up to `capacity` inflated bytes; 0 means the end of the input.
    func read(into destination: UnsafeMutableRawPointer, capacity: Int) throws(InflateError) -> Int {
        if stagedStart == stagedEnd {
            if let pendingDamage { throw pendingDamage }
            if capacity >= Self.minimumRoom { return try inflate(into: destination, room: capacity) }
            if staged.isEmpty { staged = [UInt8](repeating: 0, count: 2 * Self.minimumRoom) }
            var thrown: InflateError?
            let count = staged.withUnsafeMutableBytes { bytes -> Int in
                do throws(InflateError) {
                    return try inflate(into: bytes.baseAddress!, room: bytes.count)
                } catch {
                    thrown = error
                    return 0
                }
            }
            if let thrown { throw thrown }
            (stagedStart, stagedEnd) = (0, count)
        }
        let count = min(capacity, stagedEnd - stagedStart)
        staged.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + stagedStart, byteCount: count) }
        stagedStart += count
        return count
    }

    /// Inflates into `destination`, at least ``minimumRoom`` long: some bytes, or 0 at the end.
    private func inflate(into destination: UnsafeMutableRawPointer, room: Int) throws(InflateError) -> Int {
        let room = min(room, Int(UInt32.max))
        while !finished {
            if inputStart == inputEnd {
                if !sawEnd {
                    try refill()
                    continue
                }
                guard memberEnded else {
                    // What ISA-L inflated from the last bytes but still holds comes out first.
                    if !inHeader {
                        let (_, produced) = step(into: destination, room: room)
                        if produced > 0 { return count(produced) }
                    }
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
                startMember()
                memberEnded = false
            }
            if inHeader {
                // ISAL_DECOMP_OK once the header is read, ISAL_END_INPUT when it needs more input,
                // an error status (not gzip, not deflate, a bad header CRC) otherwise.
                let status = input.withUnsafeMutableBufferPointer { bytes -> Int32 in
                    state.pointee.next_in = bytes.baseAddress! + inputStart
                    state.pointee.avail_in = UInt32(inputEnd - inputStart)
                    let status = isal_read_gzip_header(state, &header)
                    inputStart = inputEnd - Int(state.pointee.avail_in)
                    return status
                }
                switch status {
                case ISAL_DECOMP_OK: inHeader = false
                case ISAL_END_INPUT: continue
                default:
                    throw InflateError(
                        message: "the gzip stream is corrupt (\(Self.reason(status, inHeader: true)))")
                }
                continue
            }
            let (status, produced) = step(into: destination, room: room)
            switch status {
            case ISAL_DECOMP_OK: memberEnded = state.pointee.block_state == ISAL_BLOCK_FINISH
            default:
                let damage = InflateError(
                    message: "the gzip stream is corrupt (\(Self.reason(status, inHeader: false)))")
                guard produced > 0 else { throw damage }
                pendingDamage = damage
            }
            if produced > 0 { return count(produced) }
        }
        return 0
    }

    /// One call of `isal_inflate` over the input held: its status and the bytes it wrote.
    private func step(into destination: UnsafeMutableRawPointer, room: Int) -> (status: Int32, produced: Int) {
        input.withUnsafeMutableBufferPointer { bytes in
            state.pointee.next_in = bytes.baseAddress! + inputStart
            state.pointee.avail_in = UInt32(inputEnd - inputStart)
            state.pointee.next_out = destination.assumingMemoryBound(to: UInt8.self)
            state.pointee.avail_out = UInt32(room)
            // ISAL_DECOMP_OK when the input is used up, the output full or the member ended (its
            // block state then says so), or an error status (corrupt data).
            let status = isal_inflate(state)
            fenceline_vector_reset()
            inputStart = inputEnd - Int(state.pointee.avail_in)
            return (status, room - Int(state.pointee.avail_out))
        }
    }

    /// Counts `produced` inflated bytes, marking a decompression bomb, and returns them.
    private func count(_ produced: Int) -> Int {
        inflatedBytes += produced
        if inflatedBytes > Self.bombThreshold && inflatedBytes / Self.bombRatio > compressedBytes {
            pendingDamage = InflateError(
                message:
                    "the gzip stream inflates over \(Self.bombRatio) times its size (\(compressedBytes >> 10) KiB to over \(inflatedBytes >> 20) MiB): refused as a decompression bomb",
                isBomb: true)
        }
        return produced
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

/// Inflates a regular file's gzip stream on a thread of its own, up to ``chunksAhead`` chunks
/// ahead of its reader, so that a run's parse and engine do not wait for inflation in turn. What
/// the thread inflates, and the damage it meets, reach the reader in order. Only for regular
/// files: a read never blocks there, so ``stop()`` returns at once.
///
/// Far ahead: with as many engines as cores, the thread can use a core whenever one is free
/// (while the run merges and writes a batch, say). Chunks the reader has emptied are inflated
/// into again rather than freed, so their pages are faulted in once.
final class InflatingAhead: @unchecked Sendable {
    /// Inflated bytes (the first `count` of `bytes`), with the compressed bytes read by then; the
    /// last has `end` set (and the damage that ended the stream, if any).
    private struct Chunk {
        var bytes: [UInt8]
        var count: Int
        var compressedBytes: Int
        var end = false
        var damage: InflateError?
    }

    private let inflater: GzipInflater
    private let condition = NSCondition()
    /// Guarded by `condition`: the chunks inflated and not yet read, and emptied ones to reuse.
    private var ready: [Chunk] = []
    private var spare: [[UInt8]] = []
    private var stopped = false
    private var running = true
    /// The reader's side: the chunk it reads from and how far.
    private var current = Chunk(bytes: [], count: 0, compressedBytes: 0)
    private var offset = 0
    /// Compressed bytes read by the time of the bytes handed out, for progress: atomic, since a
    /// live run reads on a thread of its own while its progress meter asks from the run's.
    var compressedBytes: Int { progressBytes.load(ordering: .relaxed) }
    private let progressBytes: Atomic<Int>

    private static let chunkSize = 1 << 20
    /// 32 MiB: four blocks of a sharded run's 8 MiB.
    private static let chunksAhead = 32

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
            condition.lock()
            var bytes = spare.popLast() ?? []
            condition.unlock()
            // A new chunk's storage is inflated into as it is, never zeroed first.
            if bytes.isEmpty { bytes = [UInt8](unsafeUninitializedCapacity: Self.chunkSize) { $1 = $0.count } }
            var filled = 0
            bytes.withUnsafeMutableBytes { buffer in
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
            let chunk = Chunk(
                bytes: bytes, count: filled, compressedBytes: inflater.compressedBytes, end: ended, damage: damage)
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
        while offset == current.count {
            if current.end {
                if let damage = current.damage {
                    current.damage = nil
                    throw damage
                }
                return 0
            }
            condition.lock()
            while ready.isEmpty { condition.wait() }
            let emptied = current.bytes
            current = ready.removeFirst()
            // Handed over without a second reference, or the inflater's write would copy it.
            if !emptied.isEmpty { spare.append(consume emptied) }
            condition.broadcast()
            condition.unlock()
            offset = 0
            progressBytes.store(current.compressedBytes, ordering: .relaxed)
        }
        let count = min(capacity, current.count - offset)
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
