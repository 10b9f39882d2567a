import Fenceline

/// The comma-separated fields of one sentence body (field 0 is the address, `GPRMC`), with the
/// parsers for NMEA's field formats. Every parser names the field in its error.
struct NMEAFields {
    private let body: UnsafeBufferPointer<UInt8>
    private var ranges: [Range<Int>] = []

    init(_ body: UnsafeBufferPointer<UInt8>) {
        self.body = body
        var start = 0
        for index in 0..<body.count where body[index] == UInt8(ascii: ",") {
            ranges.append(start..<index)
            start = index + 1
        }
        ranges.append(start..<body.count)
    }

    /// How many fields, the address included.
    var count: Int { ranges.count }

    /// Field `index`, empty when the sentence is shorter.
    func bytes(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        guard index < ranges.count else { return UnsafeBufferPointer(rebasing: body[0..<0]) }
        return UnsafeBufferPointer(rebasing: body[ranges[index]])
    }

    /// The single character of field `index`, `nil` when the field is empty.
    func character(_ index: Int, name: @autoclosure () -> String) throws(LineError) -> UInt8? {
        let field = bytes(index)
        if field.isEmpty { return nil }
        guard field.count == 1 else {
            throw LineError(field: name(), message: "expected one letter, found \"\(text(index))\"")
        }
        return field[0]
    }

    /// Field `index` as text, for messages.
    func text(_ index: Int) -> String {
        let field = bytes(index)
        let shown = field.prefix(24).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }
        return String(decoding: shown, as: UTF8.self) + (field.count > 24 ? "…" : "")
    }

    /// Requires at least `minimum` fields (address included).
    func require(_ minimum: Int, for kind: NMEAReport.Kind) throws(LineError) {
        guard count >= minimum else {
            throw LineError(
                code: .malformed,
                message: "a \(kind.rawValue) sentence has at least \(minimum - 1) fields, this one \(count - 1); "
                    + "the line is cut short")
        }
    }

    /// `hhmmss[.s…]`; `nil` when empty. A leap second (`60`) is accepted.
    func time(_ index: Int, name: @autoclosure () -> String) throws(LineError) -> NMEATime? {
        let field = bytes(index)
        if field.isEmpty { return nil }
        guard field.count >= 6, field.prefix(6).allSatisfy(Self.isDigit),
            field.count == 6 || field[6] == UInt8(ascii: "."), field.dropFirst(7).allSatisfy(Self.isDigit)
        else {
            throw LineError(field: name(), message: "expected hhmmss or hhmmss.ss (UTC), found \"\(text(index))\"")
        }
        let hours = Self.twoDigits(field, 0)
        let minutes = Self.twoDigits(field, 2)
        let seconds = Self.twoDigits(field, 4)
        guard hours < 24, minutes < 60, seconds <= 60 else {
            throw LineError(
                field: name(), message: "\"\(text(index))\" is not a time of day (hh < 24, mm < 60, ss ≤ 60)")
        }
        var micros: Int64 = 0
        var scale: Int64 = 100_000
        for digit in field.dropFirst(7) where scale > 0 {
            micros += Int64(digit - 48) * scale
            scale /= 10
        }
        return NMEATime(
            microseconds: (Int64(hours) * 3600 + Int64(minutes) * 60 + Int64(seconds)) * 1_000_000 + micros,
            digits: min(6, max(0, field.count - 7)))
    }

    /// How many digits follow the decimal point in field `index`.
    func fractionDigits(_ index: Int) -> Int {
        let field = bytes(index)
        guard let dot = field.firstIndex(of: UInt8(ascii: ".")) else { return 0 }
        return field.count - dot - 1
    }

    /// A whole number in field `index` between `range`; `nil` when empty.
    func integer(_ index: Int, in range: ClosedRange<Int>, name: @autoclosure () -> String) throws(LineError) -> Int? {
        let field = bytes(index)
        if field.isEmpty { return nil }
        guard field.count <= 6, field.allSatisfy(Self.isDigit) else {
            throw LineError(field: name(), message: "expected a whole number, found \"\(text(index))\"")
        }
        let value = field.reduce(0) { $0 * 10 + Int($1 - 48) }
        guard range.contains(value) else {
            throw LineError(field: name(), message: "\(value) is outside \(range.lowerBound)–\(range.upperBound)")
        }
        return value
    }

    /// `ddmmyy` as days since 1970-01-01; `nil` when empty. Two-digit years 80–99 are 1980–1999, 00–79 are
    /// 2000–2079 (gpsd's window: nothing GPS is older than 1980).
    func day(_ index: Int, name: @autoclosure () -> String) throws(LineError) -> Int? {
        let field = bytes(index)
        if field.isEmpty { return nil }
        guard field.count == 6, field.allSatisfy(Self.isDigit) else {
            throw LineError(field: name(), message: "expected ddmmyy, found \"\(text(index))\"")
        }
        let day = Self.twoDigits(field, 0)
        let month = Self.twoDigits(field, 2)
        let shortYear = Self.twoDigits(field, 4)
        let year = shortYear >= 80 ? 1900 + shortYear : 2000 + shortYear
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month) else {
            throw LineError(field: name(), message: "\"\(text(index))\" is not a date (ddmmyy)")
        }
        return CivilDate(year: year, month: month, day: day).daysSinceEpoch
    }

    /// A latitude or longitude from `dddmm.mmmm` (field `index`) and its hemisphere (field `index + 1`);
    /// `nil` when both are empty.
    func angle(_ index: Int, latitude: Bool, name: @autoclosure () -> String) throws(LineError) -> Double? {
        let field = bytes(index)
        let hemisphere = bytes(index + 1)
        if field.isEmpty && hemisphere.isEmpty { return nil }
        let (positive, negative) =
            latitude ? (UInt8(ascii: "N"), UInt8(ascii: "S")) : (UInt8(ascii: "E"), UInt8(ascii: "W"))
        guard hemisphere.count == 1, hemisphere[0] == positive || hemisphere[0] == negative else {
            throw LineError(
                field: name(),
                message: "the hemisphere after \"\(text(index))\" must be \(latitude ? "N or S" : "E or W"), "
                    + "found \"\(text(index + 1))\"")
        }
        guard let dot = field.firstIndex(of: UInt8(ascii: ".")) ?? (field.isEmpty ? nil : field.count),
            dot >= 1, dot <= 5, field.prefix(dot).allSatisfy(Self.isDigit),
            field.dropFirst(dot + 1).allSatisfy(Self.isDigit)
        else {
            throw LineError(
                field: name(),
                message:
                    "expected \(latitude ? "ddmm.mmmm" : "dddmm.mmmm") (degrees and minutes), found \"\(text(index))\"")
        }
        var whole = 0
        for digit in field.prefix(dot) { whole = whole * 10 + Int(digit - 48) }
        let minutes = Double(whole % 100) + Self.fraction(field.dropFirst(dot + 1))
        guard minutes < 60 else {
            throw LineError(field: name(), message: "minutes \(minutes) in \"\(text(index))\" must be below 60")
        }
        let degrees = Double(whole / 100) + minutes / 60
        let limit = latitude ? 90.0 : 180.0
        guard degrees <= limit else {
            throw LineError(
                field: name(), message: "\"\(text(index))\" is \(degrees)°, beyond \(Int(limit))°")
        }
        return hemisphere[0] == negative ? -degrees : degrees
    }

    /// A decimal number, optionally signed; `nil` when empty.
    func number(_ index: Int, name: @autoclosure () -> String) throws(LineError) -> Double? {
        var field = bytes(index)[...]
        if field.isEmpty { return nil }
        var sign = 1.0
        if let first = field.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            sign = first == UInt8(ascii: "-") ? -1 : 1
            field = field.dropFirst()
        }
        let dot = field.firstIndex(of: UInt8(ascii: ".")) ?? field.endIndex
        let whole = field[..<dot]
        let fractional = dot == field.endIndex ? field[dot...] : field[(dot + 1)...]
        guard whole.count + fractional.count >= 1, whole.count <= 15, whole.allSatisfy(Self.isDigit),
            fractional.allSatisfy(Self.isDigit)
        else {
            throw LineError(field: name(), message: "expected a decimal number, found \"\(text(index))\"")
        }
        var value = 0.0
        for digit in whole { value = value * 10 + Double(digit - 48) }
        return sign * (value + Self.fraction(fractional))
    }

    /// `0.d₁d₂…` exactly rounded for up to 15 digits (later digits are below a Double's precision here).
    private static func fraction(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Double {
        var numerator: Int64 = 0
        var denominator = 1.0
        for digit in digits.prefix(15) {
            numerator = numerator * 10 + Int64(digit - 48)
            denominator *= 10
        }
        return Double(numerator) / denominator
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    private static func twoDigits(_ field: UnsafeBufferPointer<UInt8>, _ offset: Int) -> Int {
        Int(field[offset] - 48) * 10 + Int(field[offset + 1] - 48)
    }
}
