extension String {
    /// The string made safe to print on a terminal: control characters (C0, DEL, C1) and the
    /// bidirectional overrides are written as `\u001B`-style escapes, so a device name or a title
    /// read from input cannot move the cursor, retitle the window or reorder what is shown.
    /// Newlines and tabs are escaped too: what is printed as one line stays one line.
    public var terminalSafe: String {
        guard unicodeScalars.contains(where: Self.needsEscape) else { return self }
        var result = ""
        result.reserveCapacity(utf8.count + 16)
        for scalar in unicodeScalars {
            if Self.needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        // Bidirectional embeddings, overrides and isolates.
        case 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

/// `count` and its noun, in the plural for any count but one ("1 event", "2 events", "3 fixes"),
/// for the counts people read: summaries, legends. `digits` writes the number.
package func counted(
    _ count: Int, _ noun: String, plural: String? = nil, digits: (Int) -> String = { String($0) }
) -> String {
    "\(digits(count)) \(count == 1 ? noun : plural ?? noun + "s")"
}
