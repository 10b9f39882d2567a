package import Fenceline

/// Checkpoint files forged for tests: a changed state behind a checksum that matches it, so the
/// reader itself meets the change rather than the checksum.
package enum ForgedCheckpoint {
    /// The magic line's length, then the header's (version, payload length, checksum).
    package static let magicLength = "FENCELINE-CHECKPOINT\n".utf8.count
    package static let headerLength = magicLength + 20

    /// `bytes` with the checksum recomputed over its payload.
    package static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let payload = Array(bytes[headerLength...])
        let checksum = payload.withUnsafeBytes { CheckpointChecksum.of($0) }
        withUnsafeBytes(of: checksum.littleEndian) { raw in
            for (offset, byte) in raw.enumerated() { bytes[headerLength - 8 + offset] = byte }
        }
        return bytes
    }
}
