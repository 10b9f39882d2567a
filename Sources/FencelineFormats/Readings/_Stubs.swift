public import Fenceline

// Placeholder until the NMEA reader lands: NMEA input is refused as unsupported.

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
