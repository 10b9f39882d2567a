import Fenceline
import Glibc

/// A position in a line for ``NDJSONReadingDecoder/canonicalParts(_:)``, with the few reads it makes.
struct FastCursor {
    let line: UnsafeBufferPointer<UInt8>
    var position = 0

    var isAtEnd: Bool { position == line.count }

    @inline(__always)
    mutating func literal(_ text: StaticString) -> Bool {
        let length = text.utf8CodeUnitCount
        guard position + length <= line.count, memcmp(line.baseAddress! + position, text.utf8Start, length) == 0
        else { return false }
        position += length
        return true
    }

    /// Passes `value` if it comes next.
    @inline(__always)
    mutating func byte(_ value: UInt8) -> Bool {
        guard position < line.count, line[position] == value else { return false }
        position += 1
        return true
    }

    /// The range of the bytes up to the next quote (which it passes), if all are printable
    /// ASCII other than `\`: such bytes are the string they spell.
    @inline(__always)
    mutating func plainString() -> Range<Int>? {
        let start = position
        // Eight bytes at a time while eight remain: the lowest flagged byte of the word is the
        // first that is a quote, a backslash, a control byte or not ASCII (the flag tests may
        // flag bytes after a true one, never before), and names, devices and times are short.
        #if _endian(little)
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while position + 8 <= line.count {
                let word = UnsafeRawPointer(line.baseAddress! + position).loadUnaligned(as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let delete = word ^ (ones &* 0x7F)
                let flags =
                    ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (delete &- ones) & ~delete
                        | (word &- ones &* 0x20) & ~word | word) & highs
                if flags == 0 {
                    position += 8
                    continue
                }
                position += flags.trailingZeroBitCount >> 3
                guard line[position] == UInt8(ascii: "\"") else { return nil }
                position += 1
                return start..<(position - 1)
            }
        #endif
        while position < line.count {
            let byte = line[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return start..<(position - 1)
            }
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            position += 1
        }
        return nil
    }

    /// The next byte, if any.
    @inline(__always)
    func peek() -> UInt8? {
        position < line.count ? line[position] : nil
    }

    /// Passes a JSON number, checked as ``JSONScanner/parseNumber()`` checks it, without
    /// converting it: the usual form (no exponent, at most 300 characters, so finite) here, any
    /// other by ``number()``; `false` for anything that is not a valid, finite number.
    @inline(__always)
    mutating func skipNumber() -> Bool {
        var end = position
        if end < line.count, line[end] == UInt8(ascii: "-") { end += 1 }
        guard end < line.count, line[end] &- 48 < 10 else { return false }
        if line[end] == UInt8(ascii: "0") {
            end += 1
        } else {
            while end < line.count, line[end] &- 48 < 10 { end += 1 }
        }
        if end < line.count, line[end] == UInt8(ascii: ".") {
            end += 1
            guard end < line.count, line[end] &- 48 < 10 else { return false }
            while end < line.count, line[end] &- 48 < 10 { end += 1 }
        }
        if end - position <= 300, end == line.count || line[end] | 0x20 != UInt8(ascii: "e") {
            position = end
            return true
        }
        return number() != nil
    }

    /// A JSON number, read as ``JSONScanner`` reads it (the usual one by
    /// ``JSONScanner/plainNumber(in:at:)``).
    @inline(__always)
    mutating func number() -> Double? {
        if let (value, end) = JSONScanner.plainNumber(in: line, at: position) {
            position = end
            return value
        }
        var scanner = JSONScanner(bytes: line, position: position)
        guard let first = scanner.peek(), first == UInt8(ascii: "-") || (first &- 48) < 10,
            let value = try? scanner.parseNumber()
        else { return nil }
        position = scanner.position
        return value
    }

    @inline(__always)
    mutating func skipWhitespace() {
        // Most members have none: one test, then the loop.
        guard position < line.count, line[position] <= 0x20 else { return }
        while position < line.count {
            switch line[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }
}

/// The fields a fast path (``NDJSONReadingDecoder/canonicalParts(_:)``,
/// ``CSVReadingDecoder/canonicalParts(_:)``) has read of a line so far.
struct FastMembers {
    var device: Range<Int>?
    var time: Timestamp?
    var lat: Double?
    var lon: Double?
    var accuracy: Double?
    var motion = SIMD3<Double>(repeating: .nan)
    /// The NDJSON reader's key bits of the members read: a second of any is left to the full
    /// decoder (a CSV header names each column once).
    var seen: UInt16 = 0

    /// Keeps the number read for a position member, by its place in lat, lon, accuracy, speed,
    /// heading, altitude (0 … 5).
    @inline(__always)
    mutating func setPosition(_ place: Int, _ value: Double) {
        switch place {
        case 0: lat = value
        case 1: lon = value
        case 2: accuracy = value
        case 3: motion.x = value
        case 4: motion.y = value
        default: motion.z = value
        }
    }

    /// The parts, when they make a valid fix as ``FixFields/makeReading()`` checks one. Inlined:
    /// a call takes the members by copy (130 bytes through memcpy, every line).
    @inline(__always)
    func parts() -> NDJSONReadingDecoder.CanonicalParts? {
        guard let device, let time, let lat, let lon, (-90.0...90.0).contains(lat), (-180.0...180.0).contains(lon),
            accuracy.map({ $0 >= 0 && $0.isFinite }) ?? true
        else { return nil }
        return NDJSONReadingDecoder.CanonicalParts(
            device: device, time: time, coordinate: Coordinate(latitude: lat, longitude: lon), accuracy: accuracy,
            motion: motion)
    }
}
