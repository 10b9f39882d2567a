import Fenceline

extension Timestamp {
    /// Parses a JSON number of Unix seconds exactly to the microsecond (digits, not a `Double`,
    /// so `1772438400.25` is exactly a quarter second). Exponent forms go through `Double`.
    init?(unixSecondsBytes bytes: UnsafeBufferPointer<UInt8>) {
        var index = 0
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var whole: Int64 = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
            whole = whole &* 10 &+ Int64(bytes[index] - 48)
            digits += 1
            index += 1
        }
        var micros: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale: Int64 = 100_000
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                micros += Int64(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        if index < bytes.count {
            // An exponent: rare enough to take the slow road.
            guard let time = Timestamp(checkedSeconds: DecimalNumber.parse(bytes)) else { return nil }
            self = time
            return
        }
        // Checked before scaling: thirteen digits of seconds overflow 64 bits of microseconds.
        guard digits <= 13, whole <= Timestamp.latest.microseconds / 1_000_000 + 1 else { return nil }
        let total = whole * 1_000_000 + micros
        self.init(microseconds: negative ? -total : total)
        guard isRepresentable else { return nil }
    }
}
