public import Fenceline

// Placeholders until the NMEA and GPX readers land: both formats are refused as unsupported.

/// Not yet implemented: every sentence is refused.
public struct NMEADecoder {
    public init(device: String) {}
    public mutating func decode(
        _ line: UnsafeBufferPointer<UInt8>, lineNumber: Int
    ) throws(LineError) -> (reading: Reading, line: Int)? {
        throw LineError(code: .unsupportedFormat, message: "NMEA input is not supported yet")
    }
    public mutating func finish() -> (reading: Reading, line: Int)? { nil }
}

/// Not yet implemented: a document is refused.
public enum GPXDecoder {
    public struct Item: Sendable {
        public var line: Int
        public var result: Result<Reading, LineError>
    }
    public static func decode(_ bytes: [UInt8], fileDevice: String, deviceOverride: String?) -> [Item] {
        [
            Item(
                line: 1,
                result: .failure(LineError(code: .unsupportedFormat, message: "GPX input is not supported yet")))
        ]
    }
}
