import Fenceline

extension GPXDecoder {
    /// A point's text as the parser collects it, checked into a fix once its device is known.
    struct PointDraft {
        /// `trkpt`, `rtept` or `wpt`, for messages.
        var element: String
        var line: Int
        var lat: String?
        var lon: String?
        var time: String?
        var ele: String?
        var speed: String?
        var course: String?
        var fix: String?
        /// The first field whose text passed ``GPXDecoder/maximumFieldBytes``.
        var overlong: String?
        /// The first field given twice with different texts: which one is right cannot be told.
        var conflicting: String?

        /// The child elements whose text ``set(_:to:overlong:)`` keeps.
        static let capturedFields: Set<String> = ["time", "ele", "speed", "course", "fix"]

        /// Stores the text of child element `name`; a repeat with another text is noted.
        mutating func set(_ name: String, to text: String, overlong isOverlong: Bool) {
            if isOverlong && overlong == nil { overlong = name }
            func keep(_ field: inout String?) {
                if let kept = field, kept.trimmingXMLSpace != text.trimmingXMLSpace {
                    if conflicting == nil { conflicting = name }
                } else {
                    field = field ?? text
                }
            }
            switch name {
            case "time": keep(&time)
            case "ele": keep(&ele)
            case "speed": keep(&speed)
            case "course": keep(&course)
            case "fix": keep(&fix)
            default: break
            }
        }

        /// The fix of `device`, or the error naming the first field at fault.
        func reading(device: String) throws(LineError) -> Reading {
            if let overlong {
                throw LineError(
                    field: overlong,
                    message:
                        "the <\(overlong)> of this <\(element)> is longer than \(maximumFieldBytes) bytes; shorten it")
            }
            if let conflicting {
                throw LineError(
                    field: conflicting,
                    message: "the <\(element)> has two different <\(conflicting)> elements; keep the right one")
            }
            if fix?.trimmingXMLSpace == "none" {
                throw LineError(
                    field: "fix", message: "<fix>none</fix>: the receiver had no position when it wrote this point")
            }
            var fields = FixFields()
            fields.device = device
            guard let lat else {
                throw LineError(
                    field: "lat", message: "the <\(element)> has no lat attribute; add lat=\"…\" in degrees")
            }
            guard let lon else {
                throw LineError(
                    field: "lon", message: "the <\(element)> has no lon attribute; add lon=\"…\" in degrees")
            }
            fields.lat = try Self.number(lat, field: "lat")
            fields.lon = try Self.number(lon, field: "lon")
            guard let time else {
                throw LineError(
                    field: "time",
                    message:
                        "the <\(element)> has no <time>; readings need the time they were taken (routes and waypoints often lack one)"
                )
            }
            fields.time = try Self.timestamp(time)
            fields.altitude = try ele.flatMap { text throws(LineError) in try Self.optionalNumber(text, field: "ele") }
            fields.speed = try speed.flatMap { text throws(LineError) in try Self.optionalNumber(text, field: "speed") }
            fields.heading = try course.flatMap { text throws(LineError) in
                try Self.optionalNumber(text, field: "course")
            }
            return try fields.makeReading()
        }

        /// An optional number: empty text means absent.
        static func optionalNumber(_ text: String, field: String) throws(LineError) -> Double? {
            let trimmed = text.trimmingXMLSpace
            return trimmed.isEmpty ? nil : try decimal(trimmed, field: field)
        }

        /// An xsd:decimal (an exponent is tolerated, as some writers emit one), finite.
        static func number(_ text: String, field: String) throws(LineError) -> Double {
            try decimal(text.trimmingXMLSpace, field: field)
        }

        /// ``number(_:field:)`` of text already trimmed.
        private static func decimal(_ trimmed: String, field: String) throws(LineError) -> Double {
            guard isDecimal(trimmed.utf8), let value = Double(trimmed), value.isFinite else {
                throw LineError(field: field, message: "\"\(trimmed)\" is not a decimal number such as 45.2735")
            }
            return value
        }

        /// `[+-]? (digits [. digits] | . digits) ([eE] [+-]? digits)?`: what `Double(_:)` would also
        /// take, minus `nan`, `inf` and hexadecimal.
        private static func isDecimal(_ bytes: String.UTF8View) -> Bool {
            var index = bytes.startIndex
            func skipDigits() -> Int {
                var count = 0
                while index < bytes.endIndex, (48...57).contains(bytes[index]) {
                    count += 1
                    index = bytes.index(after: index)
                }
                return count
            }
            func skip(_ characters: String) -> Bool {
                guard index < bytes.endIndex, characters.utf8.contains(bytes[index]) else { return false }
                index = bytes.index(after: index)
                return true
            }
            _ = skip("+-")
            var digits = skipDigits()
            if skip(".") { digits += skipDigits() }
            guard digits > 0 else { return false }
            if skip("eE") {
                _ = skip("+-")
                guard skipDigits() > 0 else { return false }
            }
            return index == bytes.endIndex
        }

        /// An xsd:dateTime; without a zone it is UTC, as the GPX schema says.
        static func timestamp(_ text: String) throws(LineError) -> Timestamp {
            let trimmed = text.trimmingXMLSpace
            if let time = Timestamp(rfc3339: trimmed) { return time }
            if let last = trimmed.utf8.last, (48...57).contains(last), let time = Timestamp(rfc3339: trimmed + "Z") {
                return time
            }
            throw LineError(
                field: "time",
                message:
                    "\"\(trimmed)\" is not an xsd:dateTime such as 2020-12-18T06:15:50Z or 2020-12-18T07:15:50+01:00"
            )
        }
    }
}

extension String {
    /// Without leading and trailing XML white space (space, tab, CR, LF).
    var trimmingXMLSpace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        var slice = self[...]
        while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
