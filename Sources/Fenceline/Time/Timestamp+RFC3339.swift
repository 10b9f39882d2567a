extension Timestamp {
    /// Parses an RFC 3339 date-time such as `2026-03-02T08:00:00Z` or `2026-03-02 09:00:00.25+01:00`.
    ///
    /// Accepts `T`, `t` or a space between date and time, `Z`/`z` or a numeric offset, and any
    /// number of fractional digits (kept to the microsecond). A leap second (`:60`) counts as the
    /// first instant of the next minute. Returns `nil` for anything else.
    public init?(rfc3339 text: some StringProtocol) {
        var utf8 = Array(text.utf8)
        guard let value = utf8.withUnsafeMutableBufferPointer({ Timestamp(rfc3339Bytes: UnsafeBufferPointer($0)) })
        else {
            return nil
        }
        self = value
    }

    /// Parses RFC 3339 from raw bytes without allocating; the form the reading parsers use.
    public init?(rfc3339Bytes bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = Self.rfc3339MinuteSeconds(bytes),
            let time = Self.rfc3339(bytes, minuteSeconds: base)
        else { return nil }
        self = time
    }

    /// The fixed-width start `YYYY-MM-DDTHH:MM:` (17 bytes), checked, as seconds since the epoch
    /// of that minute before any offset.
    static func rfc3339MinuteSeconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count > 17 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for index in start..<(start + count) {
                let digit = Int(bytes[index]) &- 48
                guard digit >= 0 && digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        let separator = bytes[10]
        guard let year = digits(0, 4), bytes[4] == UInt8(ascii: "-"), let month = digits(5, 2),
            bytes[7] == UInt8(ascii: "-"), let day = digits(8, 2),
            separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == UInt8(ascii: " "),
            let hour = digits(11, 2), bytes[13] == UInt8(ascii: ":"), let minute = digits(14, 2),
            bytes[16] == UInt8(ascii: ":"),
            (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month), hour <= 23,
            minute <= 59
        else { return nil }
        let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60)
    }

    /// The rest after the minute, `SS[.fraction](Z|±hh:mm)`, on top of `minuteSeconds`.
    static func rfc3339(_ bytes: UnsafeBufferPointer<UInt8>, minuteSeconds: Int64) -> Timestamp? {
        var cursor = 17
        func digits(_ count: Int) -> Int? {
            guard cursor + count <= bytes.count else { return nil }
            var value = 0
            for index in cursor..<(cursor + count) {
                let digit = Int(bytes[index]) &- 48
                guard digit >= 0 && digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            cursor += count
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard cursor < bytes.count, bytes[cursor] == byte else { return false }
            cursor += 1
            return true
        }
        guard let second = digits(2), second <= 60 else { return nil }
        var micros: Int64 = 0
        if expect(UInt8(ascii: ".")) {
            // Microseconds: the first six digits, then scaled up by the digits missing from six
            // (no division per digit); any further digits are dropped.
            let first = cursor
            while cursor < bytes.count, bytes[cursor] >= 48, bytes[cursor] <= 57 {
                if cursor - first < 6 { micros = micros * 10 + Int64(bytes[cursor] - 48) }
                cursor += 1
            }
            guard cursor > first else { return nil }
            for _ in min(6, cursor - first)..<6 { micros *= 10 }
        }
        guard cursor < bytes.count else { return nil }
        var offsetSeconds = 0
        switch bytes[cursor] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            cursor += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[cursor] == UInt8(ascii: "+") ? 1 : -1
            cursor += 1
            guard let offsetHours = digits(2), expect(UInt8(ascii: ":")), let offsetMinutes = digits(2),
                offsetHours <= 23, offsetMinutes <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        default:
            return nil
        }
        guard cursor == bytes.count else { return nil }
        let time = Timestamp(microseconds: (minuteSeconds + Int64(second - offsetSeconds)) * 1_000_000 + micros)
        // An offset can carry year 0000 or 9999 past the range RFC 3339 writes back.
        return time.isRepresentable ? time : nil
    }

    /// The instant as RFC 3339 in UTC: whole seconds as `2026-03-02T08:00:30Z`, otherwise with
    /// milliseconds (`2026-03-02T08:00:30.250Z`, truncated toward the earlier millisecond).
    public var rfc3339: String {
        var fits = true
        // Digits straight into the string's storage: every event writes one or two times.
        let text = String(unsafeUninitializedCapacity: 24) { buffer in
            guard let count = writeRFC3339(into: buffer) else {
                fits = false
                return 0
            }
            return count
        }
        return fits ? text : rfc3339Outside4DigitYears
    }

    /// Writes ``rfc3339`` into `buffer` (at least 24 bytes) and returns its length, for writers
    /// that put times straight into their output; `nil` for years outside 0…9999, which only
    /// ``rfc3339`` spells.
    public func writeRFC3339(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        let (seconds, micros) = microseconds.floorDividedBy(1_000_000)
        let (days, secondOfDay) = seconds.floorDividedBy(86_400)
        let date = CivilDate(daysSinceEpoch: Int(days))
        guard (0...9999).contains(date.year), buffer.count >= 24 else { return nil }
        var count = 0
        func digits(_ value: Int, _ width: Int) {
            var value = value
            for offset in stride(from: width - 1, through: 0, by: -1) {
                buffer[count + offset] = UInt8(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            }
            count += width
        }
        func byte(_ character: Unicode.Scalar) {
            buffer[count] = UInt8(ascii: character)
            count += 1
        }
        digits(date.year, 4)
        byte("-")
        digits(date.month, 2)
        byte("-")
        digits(date.day, 2)
        byte("T")
        digits(Int(secondOfDay / 3600), 2)
        byte(":")
        digits(Int(secondOfDay / 60 % 60), 2)
        byte(":")
        digits(Int(secondOfDay % 60), 2)
        if micros != 0 {
            byte(".")
            digits(Int(micros / 1000), 3)
        }
        byte("Z")
        return count
    }

    /// ``rfc3339`` for years outside 0…9999.
    private var rfc3339Outside4DigitYears: String {
        let (seconds, micros) = microseconds.floorDividedBy(1_000_000)
        let (days, secondOfDay) = seconds.floorDividedBy(86_400)
        let date = CivilDate(daysSinceEpoch: Int(days))
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int, width: Int) {
            let digits = String(value)
            if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
            text += digits
        }
        append(date.year, width: 4)
        text += "-"
        append(date.month, width: 2)
        text += "-"
        append(date.day, width: 2)
        text += "T"
        append(Int(secondOfDay / 3600), width: 2)
        text += ":"
        append(Int(secondOfDay / 60 % 60), width: 2)
        text += ":"
        append(Int(secondOfDay % 60), width: 2)
        if micros != 0 {
            text += "."
            append(Int(micros / 1000), width: 3)
        }
        text += "Z"
        return text
    }
}

extension Int64 {
    /// Quotient and remainder rounded toward negative infinity, so instants before 1970 format correctly.
    func floorDividedBy(_ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = self / divisor
        var remainder = self % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }
}

/// Parses the RFC 3339 times of a stream, where consecutive times mostly share their date, hour
/// and minute: those 17 bytes are compared with the last ones and the date is converted again only
/// when they differ. Same results as ``Timestamp/init(rfc3339Bytes:)``; one per thread.
public struct RFC3339StreamParser {
    private var prefix: (UInt64, UInt64, UInt8) = (0, 0, 0)
    private var minuteSeconds: Int64 = 0
    private var hasPrefix = false

    public init() {}

    public mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard bytes.count > 17, let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base)
        let key = (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self), bytes[16])
        if !hasPrefix || key != prefix {
            guard let seconds = Timestamp.rfc3339MinuteSeconds(bytes) else { return nil }
            prefix = key
            minuteSeconds = seconds
            hasPrefix = true
        }
        return Timestamp.rfc3339(bytes, minuteSeconds: minuteSeconds)
    }
}
