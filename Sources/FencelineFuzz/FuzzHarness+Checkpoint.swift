import Fenceline

extension FuzzHarness {
    /// The input as a file, then its state sealed with a correct header: almost every mutation
    /// breaks the checksum, so without the second the fuzzer would never get past the header.
    func fuzzCheckpoint(_ input: UnsafeBufferPointer<UInt8>) {
        let file = Array(input)
        if let engine = try? Engine(resuming: file) {
            require(engine.checkpoint() == file, "a checkpoint that loads does not write itself again")
        }
        let headerSize = Self.magic.count + 20
        let payload = file.starts(with: Self.magic) && file.count >= headerSize ? Array(file[headerSize...]) : file
        let sealed = Self.seal(payload)
        guard sealed != file, let engine = try? Engine(resuming: sealed) else { return }
        require(engine.checkpoint() == sealed, "a checkpoint that loads does not write itself again")
    }

    /// Loading `state` must succeed and give an engine that writes `state` again.
    func checkCheckpointRoundTrip(_ state: [UInt8], from source: String) {
        do {
            require(try Engine(resuming: state).checkpoint() == state, "\(source): its checkpoint changes on a reload")
        } catch {
            fatalError("invariant broken: \(source): its own checkpoint does not load: \(error)")
        }
    }

    static let magic = Array("FENCELINE-CHECKPOINT\n".utf8)

    /// A checkpoint file around `payload`: magic, version 1, length and checksum, little-endian.
    static func seal(_ payload: [UInt8]) -> [UInt8] {
        var file = magic
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) }
        }
        append(UInt32(Engine.checkpointVersion))
        append(UInt64(payload.count))
        append(payload.withUnsafeBytes { CheckpointChecksum.of($0) })
        return file + payload
    }
}
