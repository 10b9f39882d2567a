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
        var cursor = 0
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
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2)
        else { return nil }
        guard cursor < bytes.count,
            bytes[cursor] == UInt8(ascii: "T") || bytes[cursor] == UInt8(ascii: "t")
                || bytes[cursor] == UInt8(ascii: " ")
        else { return nil }
        cursor += 1
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2)
        else { return nil }
        var micros: Int64 = 0
        if expect(UInt8(ascii: ".")) {
            var scale: Int64 = 100_000
            var any = false
            while cursor < bytes.count, bytes[cursor] >= 48, bytes[cursor] <= 57 {
                micros += Int64(bytes[cursor] - 48) * scale
                scale /= 10
                cursor += 1
                any = true
            }
            guard any else { return nil }
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
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        self.init(microseconds: seconds * 1_000_000 + micros)
    }

    /// The instant as RFC 3339 in UTC: whole seconds as `2026-03-02T08:00:30Z`, otherwise with
    /// milliseconds (`2026-03-02T08:00:30.250Z`, truncated toward the earlier millisecond).
    public var rfc3339: String {
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
