public import Fenceline
import Foundation

/// Decodes one NDJSON line into a reading (SPEC §3.1, §3.3) straight from its bytes.
///
/// Position fields are recognised by their raw key bytes and numbers converted in place, so a fix
/// costs no Foundation call and no allocation beyond the device string. Control records (rare)
/// go through the full JSON tree and the catalog decoder.
public struct NDJSONReadingDecoder {
    /// Decodes `add` records' requests with the catalog's defaults and categories.
    public var requests: RequestContext?
    /// Consecutive lines' times mostly share their minute: the date is converted once per minute.
    /// A reference, so `decode` stays non-mutating; a decoder belongs to one thread.
    private let times = TimeParser()

    /// What `add` records need from the catalog.
    public struct RequestContext {
        let decoder: CatalogDecoder
        let defaults: RequestDefaults
        /// The category ids an `add` may name: the catalog's, then those of the last
        /// `setCategories` record decoded. Shared by the copies of a context, since control
        /// records are decoded one at a time in input order by every driver.
        let categories: CategoryIDs
        /// Set by a run sharded over threads (`--threads`), whose engines each hold some of the
        /// devices: a proximity request pairs devices of every shard, so an `add` of one is a bad
        /// line there (one given in the catalog makes the run use one engine).
        public var refusesProximity = false

        /// Creates a context from the run's catalog.
        public init(decoder: CatalogDecoder, catalog: Catalog) {
            self.init(decoder: decoder, defaults: catalog.defaults, categories: catalog.categories)
        }

        /// Creates a context from an engine's defaults and categories (a resumed checkpoint's).
        public init(decoder: CatalogDecoder, defaults: RequestDefaults, categories: [NotificationCategory]) {
            self.decoder = decoder
            self.defaults = defaults
            self.categories = CategoryIDs(Set(categories.map(\.id)))
        }

        /// Makes the ids an `add` may name those of `categories` (an engine's, after it was
        /// rebuilt from its store).
        public func reset(categories: [NotificationCategory]) {
            self.categories.ids = Set(categories.map(\.id))
        }
    }

    /// The category ids of a ``RequestContext``.
    final class CategoryIDs: @unchecked Sendable {
        var ids: Set<String>

        init(_ ids: Set<String>) {
            self.ids = ids
        }
    }

    /// Creates a decoder; without a request context, `add` records are refused.
    public init(requests: RequestContext? = nil) {
        self.requests = requests
    }

    /// The reading on `line`, `nil` for a blank line.
    /// - Throws: ``LineError`` naming the field at fault.
    public func decode(_ line: UnsafeBufferPointer<UInt8>) throws(LineError) -> Reading? {
        switch try decode(line, deferringControls: false) {
        case .reading(let reading): reading
        case .blank, .control: nil
        }
    }

    /// What a line holds when control records are left for later.
    public enum LineKind {
        case blank
        case reading(Reading)
        /// A control record, not decoded: it needs the catalog (and its GEOS validation), so a
        /// parallel parser leaves it to the thread that owns the catalog decoder.
        case control
    }

    /// Decodes a reading line but leaves control records undecoded (safe on any thread).
    public func decodeDeferringControls(_ line: UnsafeBufferPointer<UInt8>) throws(LineError) -> LineKind {
        try decode(line, deferringControls: true)
    }

    /// Decodes a reading line that ``canonicalFix(_:)`` has already turned down.
    package func decodeNonCanonical(_ line: UnsafeBufferPointer<UInt8>) throws(LineError) -> Reading? {
        switch try decode(line, deferringControls: false, tryingCanonical: false) {
        case .reading(let reading): reading
        case .blank, .control: nil
        }
    }

    package func decode(
        _ line: UnsafeBufferPointer<UInt8>, deferringControls: Bool, tryingCanonical: Bool = true
    ) throws(LineError) -> LineKind {
        if tryingCanonical, let fix = canonicalFix(line) { return .reading(.fix(fix)) }
        var scanner = JSONScanner(bytes: line)
        scanner.skipWhitespace()
        if scanner.isAtEnd { return .blank }
        do {
            return try decodeFast(&scanner, line: line, deferringControls: deferringControls)
        } catch let error as JSONSyntaxError {
            throw LineError(code: .malformed, message: "malformed JSON at column \(error.offset + 1): \(error.message)")
        } catch let error as LineError {
            throw error
        } catch {
            throw LineError(code: .malformed, message: "\(error)")
        }
    }

    /// The fix on a plain fix line, in any member order, with members it does not know skipped
    /// and times as RFC 3339 or Unix seconds, read without building a JSON value (see
    /// ``canonicalParts(_:)``); `nil` for anything else (including any error), which
    /// ``decode(_:)`` reads in full, so both agree on every line. Callers that apply fixes
    /// directly (`Engine.process(_: Fix)`) use it to skip wrapping the fix in a ``Reading``.
    public func canonicalFix(_ line: UnsafeBufferPointer<UInt8>) -> Fix? {
        canonicalParts(line)?.fix(in: line)
    }

    /// A plain fix line's fields, the device as a range of the line's bytes (plain printable
    /// ASCII, no escapes: the bytes are the name): a plain value a parallel parser can keep
    /// without making the device's string.
    package struct CanonicalParts {
        package var device: Range<Int>
        package var time: Timestamp
        package var coordinate: Coordinate
        package var accuracy: Double?
        /// `speed`, `heading` and `altitude`, NaN when absent (JSON has no NaN): the engine reads
        /// none of them, so they stay out of the way of the fields it does.
        package var motion: SIMD3<Double> = SIMD3(repeating: .nan)

        /// The parts of a line that starts `offset` bytes into a block, the device a range of the
        /// block.
        package func moved(by offset: Int) -> CanonicalParts {
            var parts = self
            parts.device = (offset + device.lowerBound)..<(offset + device.upperBound)
            return parts
        }

        /// Whether these are `full`'s parts read with `motion: false`: the same device, time,
        /// position and accuracy, and no speed, heading or altitude (for tests and the fuzzer).
        package func areMotionSkipped(from full: CanonicalParts) -> Bool {
            device == full.device && time == full.time && coordinate == full.coordinate && accuracy == full.accuracy
                && motion.x.isNaN && motion.y.isNaN && motion.z.isNaN
        }

        /// The fix, its device read from `line`, the line these parts came from.
        @inline(__always)
        package func fix(in line: UnsafeBufferPointer<UInt8>) -> Fix {
            fix(device: String(decoding: UnsafeBufferPointer(rebasing: line[device]), as: UTF8.self))
        }

        /// The fix with `device`, its name already read.
        @inline(__always)
        package func fix(device: String) -> Fix {
            func optional(_ value: Double) -> Double? { value.isNaN ? nil : value }
            return Fix(
                device: device, time: time, coordinate: coordinate, accuracy: accuracy, speed: optional(motion.x),
                heading: optional(motion.y), altitude: optional(motion.z))
        }
    }

    /// ``canonicalFix(_:)``'s parse, without making the fix.
    ///
    /// The layout our writers use is matched byte by byte first; members after it (a feed's
    /// speed, battery…), another order or Unix times are read by ``memberParts(_:_:)``, from
    /// where the match stopped or from the start. Whatever it cannot read plainly (escapes, a
    /// control record, a bad value) is left to ``decode(_:)``, so both agree on every line.
    ///
    /// - Parameter motion: whether `speed`, `heading` and `altitude` are converted; without, they
    ///   are checked as the full decoder checks them and left NaN, for callers that give the
    ///   engine the position alone (three exact divisions a line on a tracker's feed).
    @inline(__always)
    package func canonicalParts(_ line: UnsafeBufferPointer<UInt8>, motion: Bool = true) -> CanonicalParts? {
        guard line.baseAddress != nil else { return nil }
        var cursor = FastCursor(line: line)
        var members = FastMembers()
        if cursor.literal(#"{"device":""#) {
            if let device = cursor.plainString(), !device.isEmpty, cursor.literal(#","time":""#),
                let timeBytes = cursor.plainString(),
                let time = times.parser.parse(UnsafeBufferPointer(rebasing: line[timeBytes])),
                cursor.literal(#","lat":"#), let lat = cursor.number(), cursor.literal(#","lon":"#),
                let lon = cursor.number()
            {
                members.device = device
                members.time = time
                members.lat = lat
                members.lon = lon
                members.seen =
                    1 << Key.device.rawValue | 1 << Key.time.rawValue | 1 << Key.lat.rawValue
                    | 1 << Key.lon.rawValue
                if cursor.literal(#","accuracy":"#) {
                    guard let accuracy = cursor.number() else { return nil }
                    members.accuracy = accuracy
                    members.seen |= 1 << Key.accuracy.rawValue
                }
                // Trackers' usual extras, in the order they usually come, matched as the fields
                // above are (written out: a loop over the names calls bcmp and retains its array
                // every line); anything else is read member by member below.
                if cursor.literal(#","speed":"#) {
                    guard motionMember(.speed, &cursor, &members, motion: motion) else { return nil }
                    if cursor.literal(#","heading":"#) {
                        guard motionMember(.heading, &cursor, &members, motion: motion) else { return nil }
                        if cursor.literal(#","altitude":"#) {
                            guard motionMember(.altitude, &cursor, &members, motion: motion) else { return nil }
                        }
                    }
                }
                // Then a feed's battery level and fix source, when they are a number and a plain
                // string: checked, not kept (the engine reads neither); any other value is left to
                // the member reader below, from the member's start.
                var mark = cursor.position
                if cursor.literal(#","battery":"#), cursor.skipNumber() { mark = cursor.position }
                cursor.position = mark
                if cursor.literal(#","source":""#), cursor.plainString() != nil { mark = cursor.position }
                cursor.position = mark
                if cursor.byte(UInt8(ascii: "}")) {
                    cursor.skipWhitespace()
                    return cursor.isAtEnd ? members.parts() : nil
                }
                guard cursor.byte(UInt8(ascii: ",")) else { return nil }
                return memberParts(&cursor, &members, motion: motion)
            }
            cursor.position = 0
        }
        cursor.skipWhitespace()
        guard cursor.byte(UInt8(ascii: "{")) else { return nil }
        cursor.skipWhitespace()
        if cursor.byte(UInt8(ascii: "}")) { return nil }
        return memberParts(&cursor, &members, motion: motion)
    }

    /// Reads the value of `key` (speed, heading or altitude), whose name the cursor has passed:
    /// converted with `motion`, only checked without (for both readers of these members).
    @inline(__always)
    private func motionMember(_ key: Key, _ cursor: inout FastCursor, _ members: inout FastMembers, motion: Bool)
        -> Bool
    {
        if motion {
            guard let value = cursor.number() else { return false }
            members.set(key, value)
        } else {
            guard cursor.skipNumber() else { return false }
        }
        members.seen |= 1 << key.rawValue
        return true
    }

    /// Reads members from `cursor` (just after a `{` or a `,`) to the object's end, adding the
    /// fields of a plain fix to `members`; `nil` as soon as the line is anything else.
    private func memberParts(_ cursor: inout FastCursor, _ members: inout FastMembers, motion: Bool) -> CanonicalParts?
    {
        while true {
            cursor.skipWhitespace()
            guard cursor.byte(UInt8(ascii: "\"")), let name = cursor.plainString() else { return nil }
            cursor.skipWhitespace()
            guard cursor.byte(UInt8(ascii: ":")) else { return nil }
            cursor.skipWhitespace()
            let key = Key(UnsafeBufferPointer(rebasing: cursor.line[name]))
            if key != .other {
                guard members.seen & (1 << key.rawValue) == 0 else { return nil }
                members.seen |= 1 << key.rawValue
            }
            switch key {
            case .device:
                guard cursor.byte(UInt8(ascii: "\"")), let device = cursor.plainString(), !device.isEmpty else {
                    return nil
                }
                members.device = device
            case .time:
                if cursor.byte(UInt8(ascii: "\"")) {
                    guard let bytes = cursor.plainString(),
                        let time = times.parser.parse(UnsafeBufferPointer(rebasing: cursor.line[bytes]))
                    else { return nil }
                    members.time = time
                } else {
                    // The usual Unix time (digits, maybe a fraction) is read once, as a time; any
                    // other number is read as JSON first, as the full decoder does.
                    let start = cursor.position
                    guard cursor.skipNumber(),
                        let time = Timestamp(
                            unixSecondsBytes: UnsafeBufferPointer(rebasing: cursor.line[start..<cursor.position]))
                    else { return nil }
                    members.time = time
                }
            case .lat, .lon, .accuracy, .speed, .heading, .altitude:
                // `null` is an absent number, as in the full decoder (so a missing lat or lon).
                if cursor.literal("null") { break }
                if key.rawValue > Key.accuracy.rawValue {
                    guard motionMember(key, &cursor, &members, motion: motion) else { return nil }
                    break
                }
                guard let value = cursor.number() else { return nil }
                members.set(key, value)
            case .op, .beacon, .adv: return nil
            case .other:
                // A number or a plain ASCII string (a feed's battery, source…) is only checked;
                // another string leaves the line to the full decoder, and any other value is
                // skipped as the full decoder skips it.
                if let first = cursor.peek(), first == UInt8(ascii: "-") || first &- 48 < 10 {
                    guard cursor.skipNumber() else { return nil }
                    break
                } else if cursor.byte(UInt8(ascii: "\"")) {
                    guard cursor.plainString() != nil else { return nil }
                    break
                }
                var scanner = JSONScanner(bytes: cursor.line, position: cursor.position)
                guard (try? scanner.skipValue()) != nil else { return nil }
                cursor.position = scanner.position
            }
            cursor.skipWhitespace()
            if cursor.byte(UInt8(ascii: ",")) { continue }
            guard cursor.byte(UInt8(ascii: "}")) else { return nil }
            cursor.skipWhitespace()
            return cursor.isAtEnd ? members.parts() : nil
        }
    }

    private func decodeFast(
        _ scanner: inout JSONScanner, line: UnsafeBufferPointer<UInt8>, deferringControls: Bool
    ) throws -> LineKind {
        guard scanner.peek() == UInt8(ascii: "{") else {
            throw LineError(code: .malformed, message: "expected a JSON object, found \(scanner.describeNext())")
        }
        scanner.position += 1
        var fields = FixFields()
        var isControl = false
        var isSighting = false
        // `"device": null` is a `respond` record's unscoped notification; any other line needs a name.
        var deviceIsNull = false
        var seen: UInt16 = 0
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "}") {
            scanner.position += 1
        } else {
            while true {
                scanner.skipWhitespace()
                guard scanner.peek() == UInt8(ascii: "\"") else {
                    throw scanner.error("expected a member name in quotes, found \(scanner.describeNext())")
                }
                let keyStart = scanner.position
                let keyRange = try scanner.skipString()
                // A name written with escapes (`"\u0064evice"`) is decoded, so it is the member it names.
                var escapedName: String?
                if keyRange == nil {
                    scanner.position = keyStart
                    escapedName = try scanner.parseString()
                }
                try scanner.expect(UInt8(ascii: ":"), "':' after member name")
                scanner.skipWhitespace()
                let key =
                    if let keyRange {
                        Key(UnsafeBufferPointer(rebasing: line[keyRange]))
                    } else {
                        escapedName!.utf8.withContiguousStorageIfAvailable { Key($0) } ?? .other
                    }
                if key != .other {
                    // `"lat":95,"lat":52.37` must not pass as either value.
                    guard seen & (1 << key.rawValue) == 0 else {
                        let name = escapedName ?? String(decoding: line[keyRange!], as: UTF8.self)
                        throw LineError(field: name, message: "appears twice in the object; give each field once")
                    }
                    seen |= 1 << key.rawValue
                }
                switch key {
                case .device where scanner.peek() == UInt8(ascii: "n"):
                    try scanner.skipValue()
                    deviceIsNull = true
                case .device: fields.device = try string(&scanner, field: "device")
                case .time: fields.time = try timestamp(&scanner)
                case .lat: fields.lat = try number(&scanner, field: "lat")
                case .lon: fields.lon = try number(&scanner, field: "lon")
                case .accuracy: fields.accuracy = try number(&scanner, field: "accuracy")
                case .speed: fields.speed = try number(&scanner, field: "speed")
                case .heading: fields.heading = try number(&scanner, field: "heading")
                case .altitude: fields.altitude = try number(&scanner, field: "altitude")
                case .op:
                    isControl = true
                    try scanner.skipValue()
                case .beacon, .adv:
                    isSighting = true
                    try scanner.skipValue()
                case .other:
                    try scanner.skipValue()
                }
                scanner.skipWhitespace()
                if scanner.peek() == UInt8(ascii: ",") {
                    scanner.position += 1
                    continue
                }
                try scanner.expect(UInt8(ascii: "}"), "',' or '}' in object")
                break
            }
        }
        scanner.skipWhitespace()
        guard scanner.isAtEnd else { throw scanner.error("unexpected \(scanner.describeNext()) after the object") }
        // One line is one record: a part of another kind would be dropped without a word.
        let position = seen & Key.positionBits
        if isControl && (position != 0 || isSighting) {
            throw LineError(field: "op", message: "a control record carries no position or beacon fields")
        }
        if isSighting && position & (1 << Key.lat.rawValue | 1 << Key.lon.rawValue) != 0 {
            throw LineError(field: "beacon", message: "a line is a fix or a beacon sighting, not both")
        }
        if seen & (1 << Key.beacon.rawValue) != 0 && seen & (1 << Key.adv.rawValue) != 0 {
            throw LineError(field: "adv", message: "give the sighting as beacon or as adv, not both")
        }
        if isControl { return deferringControls ? .control : .reading(try decodeControl(line)) }
        if deviceIsNull { throw LineError(field: "device", message: "expected a string, found null") }
        if isSighting { return .reading(try BeaconSightingDecoder.decode(line)) }
        return .reading(try fields.makeReading())
    }

    private func string(_ scanner: inout JSONScanner, field: String) throws -> String {
        guard scanner.peek() == UInt8(ascii: "\"") else {
            throw LineError(field: field, message: "expected a string, found \(scanner.describeNext())")
        }
        do {
            return try scanner.parseString()
        } catch {
            throw LineError(field: field, message: error.message)
        }
    }

    private func number(_ scanner: inout JSONScanner, field: String) throws -> Double? {
        switch scanner.peek() {
        case UInt8(ascii: "-")?, (UInt8(ascii: "0")...UInt8(ascii: "9"))?:
            do {
                return try scanner.parseNumber()
            } catch {
                throw LineError(field: field, message: error.message)
            }
        case UInt8(ascii: "n")?:
            try scanner.skipValue()
            return nil
        default:
            throw LineError(field: field, message: "expected a number, found \(scanner.describeNext())")
        }
    }

    private func timestamp(_ scanner: inout JSONScanner) throws -> Timestamp {
        switch scanner.peek() {
        case UInt8(ascii: "\"")?:
            let start = scanner.position
            if let range = try scanner.skipString(),
                let time = times.parser.parse(UnsafeBufferPointer(rebasing: scanner.bytes[range]))
            {
                return time
            }
            scanner.position = start
            let text = try scanner.parseString()
            throw LineError(field: "time", message: "\"\(text)\" is not an RFC 3339 time such as 2026-03-02T08:00:00Z")
        case UInt8(ascii: "-")?, (UInt8(ascii: "0")...UInt8(ascii: "9"))?:
            let start = scanner.position
            _ = try scanner.parseNumber()
            guard
                let time = Timestamp(
                    unixSecondsBytes: UnsafeBufferPointer(rebasing: scanner.bytes[start..<scanner.position]))
            else {
                throw LineError(
                    field: "time",
                    message: "Unix seconds outside the representable range 0000-01-01T00:00:00Z…9999-12-31T23:59:59Z")
            }
            return time
        default:
            throw LineError(
                field: "time", message: "expected an RFC 3339 string or Unix seconds, found \(scanner.describeNext())")
        }
    }
}

/// The member names the fast path knows, matched on raw bytes.
private enum Key: Int {
    case device, time, lat, lon, accuracy, speed, heading, altitude, op, beacon, adv, other

    /// The fields of a position (lat … altitude).
    static let positionBits: UInt16 = 0b1111_1100

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        func equals(_ word: StaticString) -> Bool {
            guard bytes.count == word.utf8CodeUnitCount else { return false }
            return memcmp(bytes.baseAddress!, word.utf8Start, bytes.count) == 0
        }
        switch bytes.count {
        case 2: self = equals("op") ? .op : .other
        case 3: self = equals("lat") ? .lat : equals("lon") ? .lon : equals("adv") ? .adv : .other
        case 4: self = equals("time") ? .time : .other
        case 5: self = equals("speed") ? .speed : .other
        case 6: self = equals("device") ? .device : equals("beacon") ? .beacon : .other
        case 7: self = equals("heading") ? .heading : .other
        case 8: self = equals("accuracy") ? .accuracy : equals("altitude") ? .altitude : .other
        default: self = .other
        }
    }
}

extension FastMembers {
    /// Keeps the number read for a position member (lat … altitude).
    @inline(__always)
    fileprivate mutating func set(_ key: Key, _ value: Double) {
        setPosition(key.rawValue - Key.lat.rawValue, value)
    }
}
