/// The reading formats Fenceline reads (`--input-format`).
public enum InputFormat: String, Hashable, Sendable, CaseIterable {
    /// One JSON object per line (SPEC §3.1).
    case ndjson
    /// A header row, then one fix per row.
    case csv
    /// A GPX 1.0 or 1.1 document: track, route and waypoints with times.
    case gpx
    /// NMEA 0183 sentences from a GPS receiver (`RMC`, `GGA`, `GLL`).
    case nmea

    /// The format a file name's extension implies (a `.gz` suffix is looked through), `nil` when
    /// it says nothing.
    public static func fromExtension(of path: String) -> InputFormat? {
        var name = path.lowercased()
        if name.hasSuffix(".gz") { name.removeLast(3) }
        guard let dot = name.lastIndex(of: "."), !name[dot...].contains("/") else { return nil }
        switch name[name.index(after: dot)...] {
        case "ndjson", "jsonl", "json", "geojsonl": return .ndjson
        case "csv": return .csv
        case "gpx": return .gpx
        case "nmea", "nme", "nma": return .nmea
        default: return nil
        }
    }

    /// The format the first bytes of a content suggest: `{` starts NDJSON, `<` GPX, `$` or `!`
    /// NMEA, anything else CSV. Blank lines and `#` comment lines (NMEA logs start with them) are
    /// looked past; empty content is NDJSON.
    public static func sniff(_ head: some Collection<UInt8>) -> InputFormat {
        var atLineStart = true
        var inComment = false
        for byte in head {
            if inComment {
                if byte == 0x0A {
                    inComment = false
                    atLineStart = true
                }
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0D, 0xEF, 0xBB, 0xBF: continue
            case 0x0A: atLineStart = true
            case UInt8(ascii: "#") where atLineStart: inComment = true
            case UInt8(ascii: "{"): return .ndjson
            case UInt8(ascii: "<"): return .gpx
            case UInt8(ascii: "$"), UInt8(ascii: "!"): return .nmea
            default: return .csv
            }
        }
        return .ndjson
    }
}
