/// Why a checkpoint could not be read: not a checkpoint, a version this build cannot read, or
/// damaged (truncated, altered). Reading never traps on such input; it throws this.
public struct CheckpointError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Code: String, Hashable, Sendable {
        /// The bytes do not start with the checkpoint magic string.
        case notACheckpoint
        /// A format version this build does not read.
        case unsupportedVersion
        /// Shorter than it says, its checksum does not match, or a value in it is impossible.
        case damaged
    }

    /// What kind of problem it is.
    public var code: Code
    /// What is wrong, for a person.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// The parts of a checkpoint an engine keeps between checkpoints (``Engine/checkpointCache``).
struct CheckpointCache {
    /// Checkpoints written so far: the encodings are kept from the second on, so a run that
    /// writes one checkpoint at its end does not hold its catalog twice.
    var checkpoints = 0
    /// Set by a caller that will checkpoint again and again: kept from the first.
    var keepsFromFirst = false
    /// Each request's encoding by slot; empty for one not encoded yet or no longer alive.
    var requests: [[UInt8]] = []
    /// The given digests, sorted and encoded; `nil` until written.
    var givenDigests: [UInt8]?
    /// Slots below this were handed to a ``CheckpointPreparation`` (or are not alive).
    var preparedSlots = 0
    /// Counts the checkpoints that took the given requests into the digests themselves: a
    /// preparation made before one of them is stale.
    var givenEpoch = 0
}

/// A checkpoint in parts (``Engine/checkpointParts()``), put together away from the engine.
package struct CheckpointParts: Sendable {
    /// Everything before the requests (the header a placeholder, filled in by ``assembled()``),
    /// in pieces one after another: parts the engine keeps encoded are shared, not copied.
    package var head: [[UInt8]]
    /// The request encodings by slot (empty for a slot not live), shared with the engine.
    package var encodings: [[UInt8]]
    /// The live slots, in order.
    package var slots: [Int]
    /// Each live slot's state, in the order of `slots`.
    package var states: CheckpointSlotStates
    /// Everything after the requests.
    package var tail: [UInt8]

    package init(head: [[UInt8]], encodings: [[UInt8]], slots: [Int], states: CheckpointSlotStates, tail: [UInt8]) {
        self.head = head
        self.encodings = encodings
        self.slots = slots
        self.states = states
        self.tail = tail
    }

    /// The checkpoint file, as ``Engine/checkpoint()`` would have written it then.
    package func assembled() -> [UInt8] {
        let (slotStates, stateEnds) = states.encoded()
        var writer = CheckpointWriter()
        writer.reserve(
            head.reduce(0) { $0 + $1.count } + slots.reduce(0) { $0 + encodings[$1].count } + slotStates.count
                + tail.count)
        for piece in head { writer.append(encoded: piece) }
        var start = 0
        for (index, slot) in slots.enumerated() {
            writer.append(encoded: encodings[slot])
            writer.append(encoded: slotStates[start..<stateEnds[index]])
            start = stateEnds[index]
        }
        writer.append(encoded: tail)
        return Engine.sealed(&writer)
    }
}

/// The live requests' states of a checkpoint in parts: bytes read back from a file, or the
/// engine's arrays as they were when the parts were taken, encoded where the parts are put
/// together rather than on the engine's thread.
package struct CheckpointSlotStates: @unchecked Sendable {
    // Unchecked: the arrays share storage with the engine's until it next writes them, and every
    // write there (subscript, append, assignment) copies first while this value holds them;
    // nothing writes them through a pointer. The entries' fields read here are `let`s.
    private enum Source {
        case encoded(bytes: [UInt8], ends: [Int])
        case engine(entries: [RequestEntry], states: [RequestState], slots: [Int])
    }

    private let source: Source

    /// States already encoded: state `i` is `bytes` from the end of state `i - 1` up to `ends[i]`.
    package init(bytes: [UInt8], ends: [Int]) {
        source = .encoded(bytes: bytes, ends: ends)
    }

    /// The states of `slots` as `entries` and `states` hold them.
    init(entries: [RequestEntry], states: [RequestState], slots: [Int]) {
        source = .engine(entries: entries, states: states, slots: slots)
    }

    /// The states one after another, and where each one ends.
    package func encoded() -> (bytes: [UInt8], ends: [Int]) {
        switch source {
        case .encoded(let bytes, let ends):
            return (bytes, ends)
        case .engine(let entries, let states, let slots):
            var writer = CheckpointWriter()
            writer.reserve(slots.count * 40)
            var ends: [Int] = []
            ends.reserveCapacity(slots.count)
            for slot in slots {
                Engine.writeCheckpointState(of: entries[slot], states[slot], into: &writer)
                ends.append(writer.bytes.count)
            }
            return (writer.bytes, ends)
        }
    }
}

/// Appends the primitive values of a checkpoint, little-endian, to a byte array.
///
/// Written by hand rather than through `Codable`: a million devices' state must be written and
/// read in well under two seconds, and every count and index read back is checked against the
/// bytes that remain, so a damaged file is refused rather than trusted.
struct CheckpointWriter {
    /// Set for a request's digest (``Engine/digest(of:)``): what format 2 added is left out
    /// where it is empty, so a digest is the same as format 1's.
    var digestsAsFormat1 = false
    private(set) var bytes: [UInt8] = []

    mutating func reserve(_ count: Int) { bytes.reserveCapacity(bytes.count + count) }

    /// Bytes another writer wrote (a part kept from an earlier checkpoint).
    mutating func append(encoded: [UInt8]) { bytes.append(contentsOf: encoded) }

    mutating func append(encoded: ArraySlice<UInt8>) { bytes.append(contentsOf: encoded) }

    /// Replaces the bytes at `offset` (a header written as a placeholder) with `replacement`.
    mutating func overwrite(at offset: Int, with replacement: [UInt8]) {
        bytes.replaceSubrange(offset..<(offset + replacement.count), with: replacement)
    }

    @inline(__always)
    mutating func write(_ value: UInt8) { bytes.append(value) }

    @inline(__always)
    mutating func write(_ value: Bool) { bytes.append(value ? 1 : 0) }

    @inline(__always)
    mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    mutating func write(_ value: Int64) { write(UInt64(bitPattern: value)) }

    @inline(__always)
    mutating func write(_ value: Int32) { write(UInt32(bitPattern: value)) }

    /// An `Int` as 64 bits.
    @inline(__always)
    mutating func write(_ value: Int) { write(Int64(value)) }

    @inline(__always)
    mutating func write(_ value: Double) { write(value.bitPattern) }

    @inline(__always)
    mutating func write(_ value: Timestamp) { write(value.microseconds) }

    @inline(__always)
    mutating func write(_ value: TimeSpan) { write(value.microseconds) }

    /// A count of what follows.
    @inline(__always)
    mutating func writeCount(_ count: Int) { write(UInt32(count)) }

    mutating func write(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            writeCount(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func write(_ value: [UInt8]) {
        writeCount(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func write(_ value: Coordinate) {
        write(value.latitude)
        write(value.longitude)
    }

    /// A presence byte, then the value when present.
    @inline(__always)
    mutating func write<T>(_ value: T?, _ body: (inout CheckpointWriter, T) -> Void) {
        guard let value else { return write(UInt8(0)) }
        write(UInt8(1))
        body(&self, value)
    }

    mutating func write<T>(each values: some Collection<T>, _ body: (inout CheckpointWriter, T) -> Void) {
        writeCount(values.count)
        for value in values { body(&self, value) }
    }
}

/// Reads what ``CheckpointWriter`` wrote, throwing ``CheckpointError`` (`.damaged`) at the first
/// value that runs past the end or cannot be.
struct CheckpointReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    /// The format version of the checkpoint being read (values added later are absent from older ones).
    let version: Int

    init(_ bytes: UnsafeRawBufferPointer, version: Int = Engine.checkpointVersion) {
        self.bytes = bytes
        self.version = version
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    func damaged(_ what: String) -> CheckpointError {
        CheckpointError(.damaged, "checkpoint is damaged: \(what) (at byte \(offset) of the state)")
    }

    @inline(__always)
    private mutating func take<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw damaged("it ends early") }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: value)
    }

    @inline(__always)
    mutating func byte() throws -> UInt8 { try take(UInt8.self) }

    @inline(__always)
    mutating func bool() throws -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw damaged("a flag is neither 0 nor 1")
        }
    }

    @inline(__always)
    mutating func uint32() throws -> UInt32 { try take(UInt32.self) }

    @inline(__always)
    mutating func uint64() throws -> UInt64 { try take(UInt64.self) }

    @inline(__always)
    mutating func int64() throws -> Int64 { Int64(bitPattern: try uint64()) }

    @inline(__always)
    mutating func int32() throws -> Int32 { Int32(bitPattern: try uint32()) }

    @inline(__always)
    mutating func int() throws -> Int {
        let value = try int64()
        guard let narrowed = Int(exactly: value) else { throw damaged("a number is out of range") }
        return narrowed
    }

    /// A whole number in `range`.
    mutating func int(in range: ClosedRange<Int>, _ what: String) throws -> Int {
        let value = try int()
        guard range.contains(value) else { throw damaged("\(what) \(value) is out of range") }
        return value
    }

    /// A finite number, or any number when `finite` is false.
    @inline(__always)
    mutating func double(finite: Bool = true) throws -> Double {
        let value = Double(bitPattern: try uint64())
        guard !finite || value.isFinite else { throw damaged("a number is not finite") }
        return value
    }

    /// An instant: within the representable range, or as far again past either end (a timer may
    /// be due after the last instant), so no arithmetic on it can overflow.
    @inline(__always)
    mutating func timestamp() throws -> Timestamp {
        let value = try int64()
        let reach = TimeSpan.longest.microseconds
        guard value >= Timestamp.earliest.microseconds - reach, value <= Timestamp.latest.microseconds + reach else {
            throw damaged("a time is out of range")
        }
        return Timestamp(microseconds: value)
    }

    /// A span no longer, either way, than ``TimeSpan/longest``.
    @inline(__always)
    mutating func timeSpan() throws -> TimeSpan {
        let value = try int64()
        // `magnitude`, not `abs`: abs(Int64.min) traps.
        guard value.magnitude <= TimeSpan.longest.microseconds.magnitude else {
            throw damaged("a span is out of range")
        }
        return TimeSpan(microseconds: value)
    }

    /// The largest counter a checkpoint may hold: far beyond any real run, far below where the
    /// engine's `+= 1` would overflow.
    static let largestCounter: UInt64 = 1 << 62

    /// A counter (a sequence, token or count) up to ``largestCounter``.
    mutating func counter() throws -> UInt64 {
        let value = try uint64()
        guard value <= Self.largestCounter else { throw damaged("a counter is out of range") }
        return value
    }

    /// A count of items: never more than the bytes left, since every item takes at least one.
    @inline(__always)
    mutating func count() throws -> Int {
        let count = Int(try uint32())
        guard count <= remaining else { throw damaged("a count of \(count) runs past the end") }
        return count
    }

    /// How many of `count` items of about `typicalSize` bytes each to reserve room for: no more
    /// than the bytes left could hold, so a damaged count cannot make the reader reserve memory it
    /// will not fill. The size only bounds the reservation (a wrong one costs a regrowth): a
    /// count is refused only past the bytes left, so an item smaller than thought is still read.
    func reservation(for count: Int, typicalSize: Int) -> Int {
        min(count, remaining / max(1, typicalSize))
    }

    mutating func string() throws -> String {
        let count = try count()
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        guard let text = String(validating: slice.bindMemory(to: UInt8.self), as: UTF8.self) else {
            throw damaged("a string is not UTF-8")
        }
        offset += count
        return text
    }

    mutating func byteArray() throws -> [UInt8] {
        let count = try count()
        defer { offset += count }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
    }

    mutating func coordinate() throws -> Coordinate {
        let coordinate = Coordinate(latitude: try double(), longitude: try double())
        guard coordinate.isValid else { throw damaged("a position is out of range") }
        return coordinate
    }

    @inline(__always)
    mutating func optional<T>(_ body: (inout CheckpointReader) throws -> T) throws
        -> T?
    {
        guard try bool() else { return nil }
        return try body(&self)
    }

    mutating func array<T>(
        typicalSize: Int = 1, _ body: (inout CheckpointReader) throws -> T
    ) throws -> [T] {
        let count = try count()
        var values: [T] = []
        values.reserveCapacity(reservation(for: count, typicalSize: typicalSize))
        for _ in 0..<count { values.append(try body(&self)) }
        return values
    }

    /// An enumeration case from its raw byte.
    mutating func rawCase<T: RawRepresentable>(_: T.Type, _ what: String) throws -> T
    where T.RawValue == UInt8 {
        let raw = try byte()
        guard let value = T(rawValue: raw) else { throw damaged("\(what) \(raw) is unknown") }
        return value
    }

    /// A case of a `CaseIterable` enumeration from its index.
    mutating func caseIndex<T: CaseIterable>(_: T.Type, _ what: String) throws -> T
    where T.AllCases: RandomAccessCollection {
        let raw = Int(try byte())
        let cases = T.allCases
        guard raw < cases.count else { throw damaged("\(what) \(raw) is unknown") }
        return cases[cases.index(cases.startIndex, offsetBy: raw)]
    }
}

extension CheckpointWriter {
    /// A case of a `CaseIterable` enumeration as its index (see ``CheckpointReader/caseIndex(_:_:)``).
    mutating func writeCase<T: CaseIterable & Equatable>(_ value: T) where T.AllCases: RandomAccessCollection {
        write(UInt8(T.allCases.distance(from: T.allCases.startIndex, to: T.allCases.firstIndex(of: value)!)))
    }
}

/// A 64-bit checksum of the state: the device names' hash (``DeviceHash``), which mixes every byte
/// into all 64 bits. It tells a damaged or truncated file from a good one; it is no defence
/// against a deliberate forgery, nor meant to be.
package enum CheckpointChecksum {
    /// The checksum of `bytes`.
    package static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bitPattern: Int64(DeviceHash.of(bytes: bytes.bindMemory(to: UInt8.self))))
    }
}
