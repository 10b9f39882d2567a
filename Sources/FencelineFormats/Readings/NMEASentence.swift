import Fenceline

/// A UTC time of day as a sentence states it: microseconds since midnight, and how many decimals
/// it was given with (receivers round the same epoch to 0, 2 or 3 decimals in different sentences).
struct NMEATime: Equatable {
    var microseconds: Int64
    /// Decimals after the seconds, 0 to 6.
    var digits: Int

    /// The time rounded half up to `digits` decimals.
    func rounded(to digits: Int) -> Int64 {
        var unit: Int64 = 1
        for _ in digits..<6 { unit *= 10 }
        return (microseconds + unit / 2) / unit * unit
    }

    /// Whether both name the same instant at the precision of the coarser one (`200619.295` and `200619.30`).
    func matches(_ other: NMEATime) -> Bool {
        let digits = min(digits, other.digits)
        return rounded(to: digits) == other.rounded(to: digits)
    }

    /// This time at the coarser precision of the two.
    func coarsened(by other: NMEATime) -> NMEATime {
        let digits = min(digits, other.digits)
        return NMEATime(microseconds: rounded(to: digits), digits: digits)
    }
}

/// What one NMEA 0183 line says about a fix, every field checked: the part of an epoch that an
/// `RMC`, `GGA`, `GLL`, `GST` or `ZDA` sentence contributes.
struct NMEAReport: Equatable {
    /// The sentence types the decoder reads.
    enum Kind: String {
        case rmc = "RMC"
        case gga = "GGA"
        case gll = "GLL"
        case gst = "GST"
        case zda = "ZDA"
    }

    var kind: Kind
    /// `nil` when the sentence has no time: it cannot join an epoch.
    var time: NMEATime?
    /// Days since 1970-01-01, from a valid `RMC`'s date or a `ZDA`.
    var day: Int?
    /// The position, only when the sentence says it is valid.
    var coordinate: Coordinate?
    /// The fewer of the latitude's and the longitude's decimals (of the minutes).
    var coordinateDigits = 0
    /// Whether the sentence says outright that there is no valid fix (`RMC`/`GLL` status `V`, `GGA`
    /// quality 0, FAA mode `N`).
    var saysInvalid = false
    /// Metres per second (`RMC`).
    var speed: Double?
    /// Course over ground, degrees from true north (`RMC`).
    var heading: Double?
    /// Metres above mean sea level (`GGA`).
    var altitude: Double?
    /// Horizontal 68 % radius in metres, √(σlat² + σlon²) (`GST`).
    var accuracy: Double?

    init(kind: Kind, time: NMEATime?) {
        self.kind = kind
        self.time = time
    }

    /// Whether the status (field `status`) and FAA mode (field `mode`) say the fix is valid. A status
    /// other than those in `valid`, or mode `N`, says it is not (and marks the report so); an empty
    /// status says nothing. The other fields of a sentence without a valid fix are not read:
    /// receivers fill them with placeholders such as `8960.0000`.
    mutating func validity(status: Int, mode: Int, in fields: NMEAFields, valid: [UInt8]) throws(LineError) -> Bool {
        guard let status = try fields.character(status, name: "\(kind.rawValue) status") else { return false }
        let mode = try fields.character(mode, name: "\(kind.rawValue) mode")
        saysInvalid = !valid.contains(status) || mode == UInt8(ascii: "N")
        return !saysInvalid
    }

    /// Sets the position from a latitude and longitude read from fields `index` to `index + 3`.
    mutating func setCoordinate(
        latitude: Double?, longitude: Double?, fields: NMEAFields, at index: Int
    ) throws(LineError) {
        if let latitude, let longitude {
            coordinate = Coordinate(latitude: latitude, longitude: longitude)
            coordinateDigits = min(fields.fractionDigits(index), fields.fractionDigits(index + 2))
        } else if latitude != nil || longitude != nil {
            throw LineError(
                field: "\(kind.rawValue) \(latitude == nil ? "latitude" : "longitude")",
                message: "missing while the \(latitude == nil ? "longitude" : "latitude") is given")
        }
    }
}

/// The framing of NMEA 0183 lines: comments, junk before the sentence, checksum, talker.
enum NMEASentence {
    /// Talkers whose `RMC`/`GGA`/`GLL`/`GST`/`ZDA` are read: GPS, GLONASS, Galileo, BeiDou (both ids),
    /// QZSS, NavIC, combined GNSS, and integrated navigation (`IN`, a GNSS+inertial position, as
    /// marine chartplotters send).
    static let talkers: Set<String> = ["GP", "GL", "GA", "BD", "GB", "GQ", "GI", "GN", "IN"]

    /// The report in `line`, `nil` for a line that carries none (blank, comment, another sentence).
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(LineError) -> NMEAReport? {
        var end = line.count
        while end > 0, line[end - 1] <= 0x20 { end -= 1 }
        var start = 0
        while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
        if start == end || line[start] == UInt8(ascii: "#") { return nil }
        // `$` and `!` are reserved in NMEA 0183, so the last one starts the sentence; what comes
        // before it is a sentence cut short or line noise.
        var dollar = end - 1
        while dollar >= start, line[dollar] != UInt8(ascii: "$"), line[dollar] != UInt8(ascii: "!") { dollar -= 1 }
        guard dollar >= start else {
            throw LineError(
                code: .malformed,
                message: "no NMEA sentence: a line must hold one starting with '$' or '!' "
                    + "(or be blank, or a '#' comment); this looks like the tail of a broken line")
        }
        let sentence = UnsafeBufferPointer(rebasing: line[dollar..<end])
        let (body, hasChecksum) = try checkedBody(sentence)
        // The address first: most sentences of a log (GSV, GSA, VTG, …) are not read, so they are
        // not split into fields.
        let address = body.prefix { $0 != UInt8(ascii: ",") }
        guard sentence[0] == UInt8(ascii: "$"), address.count == 5,
            talkers.contains(String(decoding: address.prefix(2), as: UTF8.self)),
            let kind = NMEAReport.Kind(rawValue: String(decoding: address.suffix(3), as: UTF8.self))
        else { return nil }
        let fields = NMEAFields(body)
        guard hasChecksum else {
            throw LineError(
                code: .malformed, field: "checksum",
                message: "missing: a \(kind.rawValue) sentence must end in '*' and two hex digits; "
                    + "without them it is taken as cut short")
        }
        switch kind {
        case .rmc: return try rmc(fields)
        case .gga: return try gga(fields)
        case .gll: return try gll(fields)
        case .gst: return try gst(fields)
        case .zda: return try zda(fields)
        }
    }

    /// The bytes between the leading `$`/`!` and the `*`, after checking the checksum if there is one.
    private static func checkedBody(_ sentence: UnsafeBufferPointer<UInt8>) throws(LineError)
        -> (body: UnsafeBufferPointer<UInt8>, hasChecksum: Bool)
    {
        guard let star = sentence.firstIndex(of: UInt8(ascii: "*")) else {
            return (UnsafeBufferPointer(rebasing: sentence[1...]), false)
        }
        let found = sentence[(star + 1)...]
        guard found.count == 2, let high = hexValue(found.first!), let low = hexValue(found.last!) else {
            throw LineError(
                code: .malformed, field: "checksum",
                message: "\"*\(String(decoding: found.prefix(8), as: UTF8.self))\" is not '*' and two hex digits "
                    + "ending the sentence; the line is corrupt or cut short")
        }
        var expected: UInt8 = 0
        for byte in sentence[1..<star] { expected ^= byte }
        let given = high << 4 | low
        guard given == expected else {
            throw LineError(
                code: .malformed, field: "checksum",
                message:
                    "expected \(hex(expected)) (XOR of the bytes between '\(Character(Unicode.Scalar(sentence[0])))' "
                    + "and '*'), found \(hex(given)); the line is corrupt or was edited")
        }
        return (UnsafeBufferPointer(rebasing: sentence[1..<star]), true)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }

    private static func hex(_ value: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(value >> 4)], digits[Int(value & 15)]])
    }
}
