import Fenceline

extension FuzzHarness {
    /// The input as a file, then its state sealed with a correct header: almost every mutation
    /// breaks the checksum, so without the second the fuzzer would never get past the header.
    func fuzzCheckpoint(_ input: UnsafeBufferPointer<UInt8>) {
        let file = Array(input)
        if let engine = try? Engine(resuming: file) {
            // A file of an older version that the engine reads is written in the current one.
            if Self.version(of: file) == Engine.checkpointVersion {
                checkRewritten(engine.checkpoint(), file)
            } else {
                checkCheckpointRoundTrip(engine.checkpoint(), from: "an older version's checkpoint, rewritten")
            }
        }
        let sealed = Self.seal(Self.state(of: file))
        guard sealed != file, let engine = try? Engine(resuming: sealed) else { return }
        checkRewritten(engine.checkpoint(), sealed)
    }

    /// A checkpoint that loads is one the engine wrote, so it writes the same bytes again.
    private func checkRewritten(_ rewritten: [UInt8], _ file: [UInt8]) {
        guard rewritten != file else { return }
        // The checksum differs whenever the state does: the first difference after the header says more.
        let header = Self.headerSize
        let differences = (0..<min(rewritten.count, file.count)).filter { rewritten[$0] != file[$0] }
        let offset = differences.first { $0 >= header } ?? differences.first ?? min(rewritten.count, file.count)
        fatalError(
            "invariant broken: a checkpoint that loads writes itself differently: \(file.count) bytes, rewritten "
                + "\(rewritten.count), first difference at byte \(offset) (state byte \(offset - header)): "
                + "\(Array(file[offset...].prefix(16))) became \(Array(rewritten[offset...].prefix(16)))")
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
    /// Magic, version (4 bytes), state length and checksum (8 bytes each).
    static let headerSize = magic.count + 20

    /// The format version in a file's header (one that loads has a whole header).
    static func version(of file: [UInt8]) -> Int {
        (0..<4).reduce(0) { $0 | Int(file[magic.count + $1]) << (8 * $1) }
    }

    /// The state a file holds after its header; a file without a whole header is all state.
    static func state(of file: [UInt8]) -> [UInt8] {
        file.starts(with: magic) && file.count >= headerSize ? Array(file[headerSize...]) : file
    }

    /// A checkpoint file around `state`: magic, version 1, length and checksum, little-endian.
    static func seal(_ state: [UInt8]) -> [UInt8] {
        var file = magic
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { file.append(contentsOf: $0) }
        }
        append(UInt32(Engine.checkpointVersion))
        append(UInt64(state.count))
        append(state.withUnsafeBytes { CheckpointChecksum.of($0) })
        return file + state
    }
}
