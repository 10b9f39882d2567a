import FencelineFormats

/// Text and number formatting shared by the SVG and HTML writers.
///
/// Everything here is locale-free and allocation-light so the same input always gives the same
/// bytes (SPEC §1: byte-identical output).
enum SVGText {
    /// `value` rounded to a tenth, without a trailing `.0`: `12`, `-3.5`; never `-0`.
    ///
    /// Magnitudes are clamped to 10⁹ px so a degenerate projection cannot overflow the integer.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let tenths = Int64((min(max(value, -1e9), 1e9) * 10).rounded())
        if tenths % 10 == 0 { return String(tenths / 10) }
        let magnitude = tenths.magnitude
        return (tenths < 0 ? "-" : "") + String(magnitude / 10) + "." + String(magnitude % 10)
    }

    /// A point of path data, `x y`: the space is left out before a negative `y`, whose `-`
    /// separates the numbers (a `y` that rounds to 0 keeps it).
    static func point(_ x: Double, _ y: Double) -> String {
        let text = number(y)
        return number(x) + (text.hasPrefix("-") ? text : " " + text)
    }

    /// `value` with `digits` decimals (for degrees and metres in captions), trailing zeros kept.
    static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale: Double = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((min(max(value, -1e12), 1e12) * scale).rounded())
        let magnitude = scaled.magnitude
        let divisor = UInt64(scale)
        var text = (scaled < 0 ? "-" : "") + String(magnitude / divisor)
        guard digits > 0 else { return text }
        let fraction = String(magnitude % divisor)
        text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        return text
    }

    /// A count with thousands grouped by commas: `250,000`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// `text` safe inside XML or HTML element content and in double- or single-quoted attributes.
    ///
    /// Characters XML 1.0 forbids (C0 controls other than tab, newline and return) become U+FFFD,
    /// so an id holding one still gives a well-formed document.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscaping) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "&", "<", ">", "\"", "'": true
        case "\t", "\n", "\r": false
        default: scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF
        }
    }

    /// `text` cut to `limit` characters with an ellipsis, so a long id cannot run out of the legend.
    static func truncated(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(1, limit - 1))) + "…"
    }

    /// A length in metres as a reader would write it: `0.5 m`, `200 m`, `1 km`, `2.5 km`.
    static func distance(_ metres: Double) -> String {
        func trimmed(_ value: Double) -> String {
            let text = fixed(value, digits: 3)
            guard text.contains(".") else { return text }
            var result = Substring(text)
            while result.hasSuffix("0") { result = result.dropLast() }
            if result.hasSuffix(".") { result = result.dropLast() }
            return String(result)
        }
        return metres >= 1000 ? trimmed(metres / 1000) + " km" : trimmed(metres) + " m"
    }

    /// A duration as `45 s`, `8 min 20 s`, `2 h 5 min`, `3 d 4 h`.
    static func duration(seconds: Double) -> String {
        let total = Int64(max(0, seconds).rounded())
        let (days, hours, minutes, secs) = (total / 86_400, total / 3600 % 24, total / 60 % 60, total % 60)
        if days > 0 { return hours > 0 ? "\(days) d \(hours) h" : "\(days) d" }
        if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
        if minutes > 0 { return secs > 0 ? "\(minutes) min \(secs) s" : "\(minutes) min" }
        return "\(secs) s"
    }
}
