public import Fenceline
import Glibc

/// Decodes CSV position readings: a header naming the columns (`device,time,lat,lon[,accuracy]`,
/// in any order, plus optional `speed`, `heading`, `altitude`), then one fix per row.
///
/// Fields may be quoted RFC 4180 style (`"a,b"`, `""` for a quote); an empty optional field is absent.
public struct CSVReadingDecoder {
    private enum Column: Int { case device, time, lat, lon, accuracy, speed, heading, altitude, ignored }
    private let columns: [Column]
    /// Rows' times mostly share their minute, converted once per minute on the fast path; shared
    /// by copies, so a thread that parses rows takes its own (``withOwnTimeCache()``).
    private var times = TimeParser()

    /// Reads the header line.
    /// - Throws: ``LineError`` when a required column is missing or named twice.
    public init(header: UnsafeBufferPointer<UInt8>) throws(LineError) {
        var header = header
        if header.count >= 3, header[0] == 0xEF, header[1] == 0xBB, header[2] == 0xBF {
            header = UnsafeBufferPointer(rebasing: header[3...])
        }
        let names = try Self.split(header).map { String(decoding: $0, as: UTF8.self).trimmed.lowercased() }
        var columns: [Column] = []
        for name in names {
            let column: Column
            switch name {
            case "device", "device_id", "deviceid": column = .device
            case "time", "timestamp": column = .time
            case "lat", "latitude": column = .lat
            case "lon", "lng", "long", "longitude": column = .lon
            case "accuracy": column = .accuracy
            case "speed": column = .speed
            case "heading", "course": column = .heading
            case "altitude", "ele", "elevation": column = .altitude
            default: column = .ignored
            }
            if column != .ignored && columns.contains(column) {
                throw LineError(code: .malformed, field: name, message: "column named twice in the header")
            }
            columns.append(column)
        }
        for (column, name) in [(Column.device, "device"), (.time, "time"), (.lat, "lat"), (.lon, "lon")]
        where !columns.contains(column) {
            throw LineError(
                code: .malformed, field: name,
                message: "the CSV header lacks this column; expected device,time,lat,lon[,accuracy]")
        }
        self.columns = columns
    }

    /// This decoder, with a time cache of its own for another thread.
    package func withOwnTimeCache() -> CSVReadingDecoder {
        var copy = self
        copy.times = TimeParser()
        return copy
    }

    /// The fix on `line`, `nil` for a blank line.
    public func decode(_ line: UnsafeBufferPointer<UInt8>) throws(LineError) -> Reading? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        let fields = try Self.split(line)
        guard fields.count == columns.count else {
            throw LineError(
                code: .malformed, message: "expected \(columns.count) fields as in the header, found \(fields.count)")
        }
        var fix = FixFields()
        for (column, field) in zip(columns, fields) {
            switch column {
            case .device: fix.device = try Self.deviceName(field)
            case .time: fix.time = try Self.time(field)
            case .lat: fix.lat = try Self.number(field, name: "lat")
            case .lon: fix.lon = try Self.number(field, name: "lon")
            case .accuracy: fix.accuracy = try Self.number(field, name: "accuracy")
            case .speed: fix.speed = try Self.number(field, name: "speed")
            case .heading: fix.heading = try Self.number(field, name: "heading")
            case .altitude: fix.altitude = try Self.number(field, name: "altitude")
            case .ignored: break
            }
        }
        return try fix.makeReading()
    }

    /// A row's fix fields without building a field array, the device a range of `line`, for a
    /// row with no quotes whose device name is printable ASCII (the usual export); `nil` for any
    /// other row, which ``decode(_:)`` reads (and both agree on every row).
    package func canonicalParts(_ line: UnsafeBufferPointer<UInt8>) -> NDJSONReadingDecoder.CanonicalParts? {
        guard let base = line.baseAddress, memchr(base, Int32(UInt8(ascii: "\"")), line.count) == nil else {
            return nil
        }
        var fields = FastMembers()
        var start = 0
        let last = columns.count - 1
        for (index, column) in columns.enumerated() {
            // As many fields as columns: the last ends the line, the others end at a comma.
            if column.rawValue >= Column.lat.rawValue && column != .ignored,
                let (value, end) = JSONScanner.plainNumber(in: line, at: start),
                index == last ? end == line.count : end < line.count && line[end] == UInt8(ascii: ",")
            {
                // The usual number, the whole field, read where it lies (not found and then read).
                fields.setPosition(column.rawValue - Column.lat.rawValue, value)
                start = end + 1
                continue
            }
            var end = start
            while end < line.count, line[end] != UInt8(ascii: ",") { end += 1 }
            guard index == last ? end == line.count : end < line.count else { return nil }
            let field = start..<end
            start = end + 1
            switch column {
            case .ignored: continue
            case .device:
                guard !field.isEmpty, line[field].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
                fields.device = field
                continue
            default: break
            }
            let bytes = Self.trimmed(UnsafeBufferPointer(rebasing: line[field]))
            guard !bytes.isEmpty else { continue }  // an empty field is absent
            if column == .time {
                guard let parsed = times.parser.parse(bytes) ?? Self.time(bytes) else { return nil }
                fields.time = parsed
                continue
            }
            guard let value = Self.number(bytes) else { return nil }
            fields.setPosition(column.rawValue - Column.lat.rawValue, value)
        }
        return fields.parts()
    }

    /// The device name, held to what an NDJSON string may carry: valid UTF-8 without raw
    /// control characters.
    private static func deviceName(_ field: [UInt8]) throws(LineError) -> String {
        if let control = field.first(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw LineError(
                field: "device",
                message: "control character 0x\(String(control, radix: 16, uppercase: true)) in the device name")
        }
        guard let name = String(validating: field, as: UTF8.self) else {
            throw LineError(field: "device", message: "the device name is not valid UTF-8")
        }
        return name
    }

    private static func number(_ field: [UInt8], name: String) throws(LineError) -> Double? {
        let value: Double?? = field.withUnsafeBufferPointer { buffer in
            let trimmed = Self.trimmed(buffer)
            return trimmed.isEmpty ? .some(nil) : Self.number(trimmed).map { Optional($0) }
        }
        guard let value else {
            throw LineError(
                field: name, message: "expected a number, found \"\(String(decoding: field, as: UTF8.self))\"")
        }
        return value
    }

    private static func time(_ field: [UInt8]) throws(LineError) -> Timestamp? {
        let time: Timestamp?? = field.withUnsafeBufferPointer { buffer in
            let trimmed = Self.trimmed(buffer)
            return trimmed.isEmpty ? .some(nil) : Self.time(trimmed).map { Optional($0) }
        }
        guard let time else {
            throw LineError(
                field: "time",
                message: "\"\(String(decoding: field, as: UTF8.self))\" is neither RFC 3339 nor Unix seconds")
        }
        return time
    }

    // The field readers below are shared by ``decode(_:)`` and ``canonicalParts(_:)``, so that
    // the two cannot disagree on what a field means.

    /// `field` without the spaces and tabs around it.
    private static func trimmed(_ field: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var (start, end) = (0, field.count)
        while start < end, field[start] == 0x20 || field[start] == 0x09 { start += 1 }
        while end > start, field[end - 1] == 0x20 || field[end - 1] == 0x09 { end -= 1 }
        return UnsafeBufferPointer(rebasing: field[start..<end])
    }

    /// The JSON number that is the whole of `field`, or `nil`.
    private static func number(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
        if let (value, end) = JSONScanner.plainNumber(in: field, at: 0), end == field.count { return value }
        var scanner = JSONScanner(bytes: field)
        guard let value = try? scanner.parseNumber(), scanner.isAtEnd else { return nil }
        return value
    }

    /// The RFC 3339 time or Unix seconds that is the whole of `field`, or `nil`.
    private static func time(_ field: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        if let time = Timestamp(rfc3339Bytes: field) { return time }
        var scanner = JSONScanner(bytes: field)
        guard (try? scanner.parseNumber()) != nil, scanner.isAtEnd else { return nil }
        return Timestamp(unixSecondsBytes: field)
    }

    /// Splits a CSV line into its fields, undoing RFC 4180 quoting.
    static func split(_ line: UnsafeBufferPointer<UInt8>) throws(LineError) -> [[UInt8]] {
        var fields: [[UInt8]] = []
        var current: [UInt8] = []
        var index = 0
        var quoted = false
        var wasQuoted = false
        while index < line.count {
            let byte = line[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < line.count, line[index + 1] == UInt8(ascii: "\"") {
                        current.append(byte)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(byte)
                }
            } else if byte == UInt8(ascii: ",") {
                fields.append(current)
                current = []
                wasQuoted = false
            } else if byte == UInt8(ascii: "\"") && current.allSatisfy({ $0 == 0x20 }) && !wasQuoted {
                current = []
                quoted = true
                wasQuoted = true
            } else {
                current.append(byte)
            }
            index += 1
        }
        guard !quoted else { throw LineError(code: .malformed, message: "unterminated quoted field") }
        fields.append(current)
        return fields
    }
}

extension String {
    fileprivate var trimmed: String {
        var slice = self[...]
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return String(slice)
    }
}
