public import Fenceline
import Foundation

/// Decodes BLE advertising data (hex) into a beacon identity: an iBeacon (Apple manufacturer data
/// 0x004C, type 0x02 length 0x15) or an Eddystone-UID frame (service data 0xFEAA, frame 0x00).
///
/// Written by hand because no listed package parses BLE advertisements. The data is a run of AD
/// structures `[length][type][payload]`; a zero length ends it (padding). Anything short, with a
/// length byte running past the end, or of an unknown kind is refused with a reason.
///
/// Eddystone-UID maps onto the iBeacon identity as follows: the 10-byte namespace becomes the UUID
/// by Eddystone's UUID elision (namespace bytes 0–3, then six zero bytes, then namespace bytes 4–9),
/// the 6-byte instance gives major (bytes 2–3) and minor (bytes 4–5) and must start with two zero
/// bytes, and the frame's ranging data (power at 0 m) becomes txPower at 1 m by subtracting 41 dBm.
public enum AdvertisementDecoder {
    /// What an advertisement says about the beacon that sent it.
    public struct Decoded: Hashable, Sendable {
        public var identity: BeaconIdentity
        /// Calibrated power at 1 m in dBm.
        public var txPower: Double
        /// `ibeacon` or `eddystone-uid`.
        public var kind: String
    }

    /// Decodes the hex of an advertisement (`0x` prefix, spaces and colons allowed).
    public static func decode(hex text: String) throws(LineError) -> Decoded {
        let bytes = try parseHex(text)
        var offset = 0
        var sawStructure = false
        var unsupported: String?
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            guard offset + 1 + length <= bytes.count else {
                throw LineError(
                    field: "adv",
                    message:
                        "AD structure at byte \(offset) claims \(length) bytes but only \(bytes.count - offset - 1) follow"
                )
            }
            sawStructure = true
            let type = bytes[offset + 1]
            let payload = Array(bytes[(offset + 2)..<(offset + 1 + length)])
            switch type {
            case 0xFF where payload.count >= 2 && payload[0] == 0x4C && payload[1] == 0x00:
                return try iBeacon(payload)
            case 0x16 where payload.count >= 2 && payload[0] == 0xAA && payload[1] == 0xFE:
                let frame = Array(payload.dropFirst(2))
                if let kind = frame.first, kind != 0x00 {
                    let names: [UInt8: String] = [0x10: "URL", 0x20: "TLM", 0x30: "EID"]
                    unsupported =
                        "an Eddystone \(names[kind] ?? String(format: "0x%02X", kind)) frame, which names no beacon; only UID (0x00) does"
                    break
                }
                return try eddystone(frame)
            default:
                break
            }
            offset += 1 + length
        }
        if let unsupported { throw LineError(field: "adv", message: unsupported) }
        guard sawStructure else { throw LineError(field: "adv", message: "empty advertisement (no AD structure)") }
        throw LineError(field: "adv", message: "no iBeacon or Eddystone-UID frame in the advertisement")
    }

    private static func iBeacon(_ payload: [UInt8]) throws(LineError) -> Decoded {
        // payload: 4C 00 | 02 15 | uuid(16) | major(2) | minor(2) | tx(1)
        guard payload.count >= 4, payload[2] == 0x02 else {
            throw LineError(
                field: "adv",
                message:
                    "Apple manufacturer data that is not an iBeacon (type byte \(payload.count > 2 ? String(format: "0x%02X", payload[2]) : "missing"), expected 0x02)"
            )
        }
        guard payload[3] == 0x15, payload.count == 25 else {
            throw LineError(
                field: "adv",
                message:
                    "iBeacon data must be 21 bytes after 02 15 (length byte 0x\(String(format: "%02X", payload[3])), \(payload.count - 4) bytes present)"
            )
        }
        let uuid = uuidString(Array(payload[4..<20]))
        let major = Int(payload[20]) << 8 | Int(payload[21])
        let minor = Int(payload[22]) << 8 | Int(payload[23])
        let tx = Double(Int8(bitPattern: payload[24]))
        try BeaconSightingDecoder.checkTxPower(tx, field: "adv")
        return Decoded(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), txPower: tx, kind: "ibeacon")
    }

    private static func eddystone(_ frame: [UInt8]) throws(LineError) -> Decoded {
        // frame: 00 | ranging(1) | namespace(10) | instance(6) | [RFU(2)]
        guard frame.count == 18 || frame.count == 20 else {
            throw LineError(field: "adv", message: "an Eddystone-UID frame is 18 or 20 bytes, found \(frame.count)")
        }
        let ranging = Double(Int8(bitPattern: frame[1]))
        let namespace = Array(frame[2..<12])
        let instance = Array(frame[12..<18])
        guard instance[0] == 0 && instance[1] == 0 else {
            throw LineError(
                field: "adv",
                message:
                    "Eddystone instance \(hex(instance)) does not fit major/minor: its first two bytes must be 00 00")
        }
        let uuid = uuidString(Array(namespace[0..<4]) + [0, 0, 0, 0, 0, 0] + Array(namespace[4..<10]))
        let major = Int(instance[2]) << 8 | Int(instance[3])
        let minor = Int(instance[4]) << 8 | Int(instance[5])
        try BeaconSightingDecoder.checkTxPower(ranging - 41, field: "adv")
        return Decoded(
            identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), txPower: ranging - 41,
            kind: "eddystone-uid")
    }

    private static func parseHex(_ text: String) throws(LineError) -> [UInt8] {
        var digits = Array(text.utf8).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: ":") }
        if digits.count >= 2, digits[0] == UInt8(ascii: "0"), digits[1] | 0x20 == UInt8(ascii: "x") {
            digits.removeFirst(2)
        }
        guard digits.count.isMultiple(of: 2) else {
            throw LineError(field: "adv", message: "hex has an odd number of digits (\(digits.count))")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else {
                throw LineError(
                    field: "adv",
                    message:
                        "not hex: \"\(String(decoding: digits[index...min(index + 1, digits.count - 1)], as: UTF8.self))\" at digit \(index)"
                )
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        guard bytes.count <= 255 else {
            throw LineError(field: "adv", message: "longer than any advertisement (\(bytes.count) bytes)")
        }
        return bytes
    }

    private static func uuidString(_ bytes: [UInt8]) -> String {
        let text = hex(bytes)
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(
                text[
                    text.index(
                        text.startIndex, offsetBy: range.lowerBound)..<text.index(
                            text.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02X", $0) }.joined()
    }
}
