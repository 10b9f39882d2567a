package import Fenceline

/// Appends JSON text to a byte buffer: escaped strings, numbers in shortest round-trip form.
///
/// Hand-written so events are encoded without a `JSONEncoder` per event and with a fixed key order.
package struct JSONWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func raw(_ text: String) {
        // Through the contiguous bytes: appending the UTF-8 view went byte by byte.
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    package mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        escaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string's contents as a JSON string holds them, without the quotes, so that a value made
    /// of parts (a visit id) is written part by part.
    package mutating func escaped(_ text: String) {
        // Most strings (ids, names, times) need no escape: checked and copied in one go.
        var text = text
        let plain = text.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if plain { return }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
    }

    /// An integer's digits, written straight into the output.
    package mutating func integer(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }

    /// A time as an RFC 3339 string (``Timestamp/rfc3339``), written straight into the output.
    package mutating func time(_ time: Timestamp) {
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, the longest form
        let written: Bool = withUnsafeMutableBytes(of: &text) { raw in
            raw.withMemoryRebound(to: UInt8.self) { buffer in
                guard let count = time.writeRFC3339(into: buffer) else { return false }
                bytes.append(UInt8(ascii: "\""))
                bytes.append(contentsOf: buffer[..<count])
                bytes.append(UInt8(ascii: "\""))
                return true
            }
        }
        if !written { string(time.rfc3339) }
    }

    /// A double as ``format(_:)`` writes it, whole values as digits without a `String`.
    package mutating func number(_ value: Double) {
        if value == value.rounded(), abs(value) < 1e15 {
            integer(Int(value))
        } else {
            raw(Self.format(value))
        }
    }

    /// A double as JSON: whole values without a fraction, others in Swift's shortest round-trip form.
    package static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    /// A JSON value as it was written (numbers keep their literal text).
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): raw(flag ? "true" : "false")
        case .number(let number): raw(number.text)
        case .string(let text): string(text)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(item)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                string(member.key)
                bytes.append(UInt8(ascii: ":"))
                self.value(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Starts a member: `,"key":` (without the comma for the first).
    package mutating func key(_ name: StaticString, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }
}
