/// The reading formats the pipeline reads (`--input-format`).
public enum InputFormat: String, Hashable, Sendable, CaseIterable {
    /// One JSON object per line (SPEC §3.1).
    case ndjson
    /// A header row, then one fix per row.
    case csv

    /// The format a file name's extension implies, `nil` when it says nothing.
    public static func fromExtension(of path: String) -> InputFormat? {
        let name = path.lowercased()
        if name.hasSuffix(".ndjson") || name.hasSuffix(".jsonl") || name.hasSuffix(".json") { return .ndjson }
        if name.hasSuffix(".csv") { return .csv }
        return nil
    }

    /// The format the first bytes suggest: `{` is NDJSON, anything else CSV.
    static func sniff(_ line: UnsafeBufferPointer<UInt8>) -> InputFormat {
        for byte in line where byte != 0x20 && byte != 0x09 && byte != 0xEF && byte != 0xBB && byte != 0xBF {
            return byte == UInt8(ascii: "{") ? .ndjson : .csv
        }
        return .ndjson
    }
}
