import Foundation

/// Correctly rounded decimal-to-double conversion for JSON numbers.
///
/// Most coordinates have at most 15 significant digits and a small exponent: then the value is one
/// exact integer scaled by an exact power of ten, a single IEEE operation and so correctly
/// rounded (Clinger's fast path). Anything else goes to the C library's `strtod`.
enum DecimalNumber {
    /// 10^0 through 10^22, every one exact in a double. A literal, so the compiler lays it out
    /// statically: a computed initialiser cost a lazy-initialisation check on every number.
    static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Double {
        var index = 0
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        var leading = true
        while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
            let digit = UInt64(bytes[index] - 48)
            if !(leading && digit == 0) {
                leading = false
                mantissa = mantissa &* 10 &+ digit
                digits += 1
            }
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                let digit = UInt64(bytes[index] - 48)
                if !(leading && digit == 0) {
                    leading = false
                    mantissa = mantissa &* 10 &+ digit
                    digits += 1
                }
                exponent -= 1
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            return slow(bytes)
        }
        guard digits <= 15 else { return slow(bytes) }
        var value = Double(mantissa)
        if exponent < 0 {
            guard -exponent <= 22 else { return slow(bytes) }
            value /= powersOfTen[-exponent]
        }
        return negative ? -value : value
    }

    private static func slow(_ bytes: UnsafeBufferPointer<UInt8>) -> Double {
        var text = Array(bytes)
        text.append(0)
        return text.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { strtod($0, nil) }
        }
    }
}
