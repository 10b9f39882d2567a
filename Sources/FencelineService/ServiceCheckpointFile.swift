import Fenceline

/// The service's checkpoints in two files: the requests' encodings in a table written once for as
/// long as they stay the engine's, and per checkpoint only the rest of the state (with the
/// encodings of requests added since the table). With country100k each checkpoint was a copy of
/// the 43 MB catalog, whose writing cost batch ingest a sixth of its rate.
///
/// Put together they are byte for byte the checkpoint file the engine would have written, which
/// is what `Engine(resuming:)` reads and what `GET /v1/export/checkpoint` serves: these two
/// formats are the service's own, read only from its store, each behind a checksum.
enum ServiceCheckpointFile {
    static let stateMagic = Array("FENCELINE-SERVICE-STATE\n".utf8)
    static let tableMagic = Array("FENCELINE-REQUEST-TABLE\n".utf8)
    static let version: UInt32 = 1

    struct Damaged: Error, CustomStringConvertible {
        var description: String
    }

    /// A table of the requests in `slots`, their encodings taken from `parts`.
    static func table(of parts: CheckpointParts, slots: [Int]) -> [UInt8] {
        var payload = Bytes()
        payload.reserve(slots.reduce(16) { $0 + parts.encodings[$1].count + 16 })
        payload.write(UInt64(slots.count))
        for slot in slots {
            payload.write(UInt64(slot))
            payload.write(bytes: parts.encodings[slot])
        }
        return sealed(payload.bytes, magic: tableMagic)
    }

    /// The checksum a table file is named by in the state files that use it.
    static func checksum(ofTable table: [UInt8]) -> UInt64 {
        table.withUnsafeBytes { CheckpointChecksum.of($0) }
    }

    /// `parts` without the encodings of the slots `inTable` marks, which are those of the table
    /// with checksum `table`.
    static func state(of parts: CheckpointParts, inTable: [Bool], table: UInt64) -> [UInt8] {
        var payload = Bytes()
        let (slotStates, stateEnds) = parts.states.encoded()
        let inline = parts.slots.reduce(0) { $0 + (inTable[$1] ? 0 : parts.encodings[$1].count) }
        let headCount = parts.head.reduce(0) { $0 + $1.count }
        payload.reserve(headCount + slotStates.count + parts.tail.count + inline + parts.slots.count * 24)
        payload.write(table)
        payload.write(joined: parts.head)
        payload.write(UInt64(parts.slots.count))
        var start = 0
        for (index, slot) in parts.slots.enumerated() {
            payload.write(UInt64(slot))
            if inTable[slot] {
                payload.write(UInt64(0))
            } else {
                payload.write(UInt64(1))
                payload.write(bytes: parts.encodings[slot])
            }
            payload.write(bytes: slotStates[start..<stateEnds[index]])
            start = stateEnds[index]
        }
        payload.write(bytes: parts.tail)
        return sealed(payload.bytes, magic: stateMagic)
    }

    /// The checkpoint file the engine wrote, put together from a state file and its table.
    /// - Throws: ``Damaged`` for a file that is not one, is cut short or altered, or a table that
    ///   is not the one the state names.
    static func assembled(state: [UInt8], table: [UInt8]) throws(Damaged) -> [UInt8] {
        var tableReader = try payload(of: table, magic: tableMagic, what: "request table")
        var tabled: [Int: [UInt8]] = [:]
        let entries = try tableReader.count()
        for _ in 0..<entries {
            let slot = try tableReader.slot()
            tabled[slot] = try tableReader.byteString()
        }
        var reader = try payload(of: state, magic: stateMagic, what: "checkpoint state")
        guard try reader.uint64() == checksum(ofTable: table) else {
            throw Damaged(description: "the checkpoint state names another request table")
        }
        let head = try reader.byteString()
        let count = try reader.count()
        // The checkpoint holds no slot numbers: its requests are numbered densely here.
        var encodings: [[UInt8]] = []
        var slotStates: [UInt8] = []
        var stateEnds: [Int] = []
        encodings.reserveCapacity(count)
        stateEnds.reserveCapacity(count)
        for _ in 0..<count {
            let slot = try reader.slot()
            switch try reader.uint64() {
            case 0:
                guard let bytes = tabled[slot] else {
                    throw Damaged(description: "request slot \(slot) is not in its request table")
                }
                encodings.append(bytes)
            case 1: encodings.append(try reader.byteString())
            default: throw Damaged(description: "the checkpoint state is damaged")
            }
            slotStates += try reader.byteString()
            stateEnds.append(slotStates.count)
        }
        let tail = try reader.byteString()
        guard reader.isAtEnd else { throw Damaged(description: "the checkpoint state has bytes after its end") }
        return CheckpointParts(
            head: [head], encodings: encodings, slots: Array(0..<count),
            states: CheckpointSlotStates(bytes: slotStates, ends: stateEnds), tail: tail
        ).assembled()
    }

    /// Magic, version, payload length and checksum, then the payload.
    private static func sealed(_ payload: [UInt8], magic: [UInt8]) -> [UInt8] {
        var file = Bytes()
        file.reserve(magic.count + 20 + payload.count)
        file.bytes += magic
        file.write(version)
        file.write(UInt64(payload.count))
        file.write(payload.withUnsafeBytes { CheckpointChecksum.of($0) })
        file.bytes += payload
        return file.bytes
    }

    private static func payload(of file: [UInt8], magic: [UInt8], what: String) throws(Damaged) -> Reader {
        var reader = Reader(bytes: file, position: 0)
        let damaged = Damaged(description: "the \(what) file is damaged or not one")
        guard file.count >= magic.count + 20, file.starts(with: magic) else { throw damaged }
        reader.position = magic.count
        guard try reader.uint32() == version else {
            throw Damaged(description: "the \(what) file has a version this build cannot read")
        }
        let length = try reader.uint64()
        let checksum = try reader.uint64()
        guard length == UInt64(file.count - reader.position),
            file.withUnsafeBytes({ CheckpointChecksum.of(UnsafeRawBufferPointer(rebasing: $0[reader.position...])) })
                == checksum
        else { throw damaged }
        return reader
    }

    /// Little-endian integers and length-prefixed byte strings.
    private struct Bytes {
        var bytes: [UInt8] = []

        mutating func reserve(_ count: Int) { bytes.reserveCapacity(count) }

        mutating func write(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }

        mutating func write(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }

        mutating func write(bytes more: some Collection<UInt8>) {
            write(UInt64(more.count))
            bytes += more
        }

        /// `pieces` one after another, written as one byte string (read back as one).
        mutating func write(joined pieces: [[UInt8]]) {
            write(UInt64(pieces.reduce(0) { $0 + $1.count }))
            for piece in pieces { bytes += piece }
        }
    }

    /// Reads what ``Bytes`` wrote, every length checked against what is left.
    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        var isAtEnd: Bool { position == bytes.count }

        mutating func uint32() throws(Damaged) -> UInt32 {
            UInt32(truncatingIfNeeded: try integer(size: 4))
        }

        mutating func uint64() throws(Damaged) -> UInt64 { try integer(size: 8) }

        /// A count of what follows, each at least 16 bytes.
        mutating func count() throws(Damaged) -> Int {
            let value = try uint64()
            guard value <= UInt64(bytes.count - position) / 16 else { throw cutShort }
            return Int(value)
        }

        /// A request slot: an index the engine could have.
        mutating func slot() throws(Damaged) -> Int {
            let value = try uint64()
            guard value < UInt64(Int32.max) else { throw Damaged(description: "a request slot is out of range") }
            return Int(value)
        }

        mutating func byteString() throws(Damaged) -> [UInt8] {
            let length = try uint64()
            guard length <= UInt64(bytes.count - position) else { throw cutShort }
            defer { position += Int(length) }
            return Array(bytes[position..<(position + Int(length))])
        }

        private var cutShort: Damaged { Damaged(description: "the checkpoint file is cut short") }

        private mutating func integer(size: Int) throws(Damaged) -> UInt64 {
            guard bytes.count - position >= size else { throw cutShort }
            var value: UInt64 = 0
            for index in 0..<size { value |= UInt64(bytes[position + index]) << (8 * index) }
            position += size
            return value
        }
    }
}
