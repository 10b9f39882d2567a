internal import CZlib
import FencelineFormats

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
