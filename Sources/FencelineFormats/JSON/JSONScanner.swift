import Fenceline

/// A JSON syntax error at a byte offset of the input.
struct JSONSyntaxError: Error {
    var offset: Int
    var message: String
}

/// A hand-written JSON scanner over raw bytes.
///
/// Written by hand because the reading parser runs once per input line, millions of times, where
/// Foundation's `JSONSerialization`/`JSONDecoder` cost microseconds each; it also keeps object
/// member order (for `userInfo`) and reports exact byte offsets for `file:line:column` errors.
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int
    /// Elements and members of the arrays and objects being parsed, so each container is allocated
    /// once at its final size instead of growing element by element.
    private var elementStack: [JSONValue] = []
    private var memberStack: [(key: String, value: JSONValue)] = []
    /// Nesting deeper than this is refused, so hostile input cannot exhaust the stack.
    static let maximumDepth = 256

    init(bytes: UnsafeBufferPointer<UInt8>, position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    var isAtEnd: Bool { position >= bytes.count }

    @inline(__always)
    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    @inline(__always)
    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? position, message: message)
    }

    /// Consumes `byte` after optional whitespace, or throws `expected`, made only then: it
    /// often names the member just read, and building that text for every member of a large
    /// catalog would cost more than parsing it.
    mutating func expect(_ byte: UInt8, _ expected: @autoclosure () -> String) throws(JSONSyntaxError) {
        skipWhitespace()
        guard peek() == byte else { throw error("expected \(expected()), found \(describeNext())") }
        position += 1
    }

    func describeNext() -> String {
        guard let byte = peek() else { return "end of line" }
        switch byte {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "t") where startsWith("true"), UInt8(ascii: "f") where startsWith("false"): return "a boolean"
        case UInt8(ascii: "n") where startsWith("null"): return "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return "a number"
        case UInt8(ascii: "N"): return "NaN, which is not a JSON number"
        case UInt8(ascii: "I"): return "Infinity, which is not a JSON number"
        case 0x20...0x7E: return "'\(Character(UnicodeScalar(byte)))'"
        default: return "byte 0x\(String(byte, radix: 16))"
        }
    }

    private func startsWith(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        return (0..<count).allSatisfy { bytes[position + $0] == word.utf8Start[$0] }
    }

    /// Parses one value of any kind.
    mutating func parseValue(depth: Int = 0) throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw error("expected a value, found end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
            position += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                position += 1
                return .object(JSONObject())
            }
            let base = memberStack.count
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else {
                    throw error("expected a member name in quotes, found \(describeNext())")
                }
                let key = try parseString()
                try expect(UInt8(ascii: ":"), "':' after member name \"\(key)\"")
                let value = try parseValue(depth: depth + 1)
                memberStack.append((key, value))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}' in object")
                let object = JSONObject(memberStack[base...])
                memberStack.removeSubrange(base...)
                return .object(object)
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth) levels") }
            position += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                position += 1
                return .array([])
            }
            let base = elementStack.count
            while true {
                let element = try parseValue(depth: depth + 1)
                elementStack.append(element)
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']' in array")
                let elements = Array(elementStack[base...])
                elementStack.removeSubrange(base...)
                return .array(elements)
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = position
            let value = try parseNumber()
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            return .number(JSONNumber(text: text, value: value))
        default:
            throw error("expected a value, found \(describeNext())")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw error("expected \(word), found end of input") }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw error("expected \(word)")
        }
        position += count
    }

    /// Parses a string starting at its opening quote.
    mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = position
        position += 1
        let contentStart = position
        var ascii = true
        // Fast path: no escapes.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: bytes[contentStart..<position])
                position += 1
                // ASCII is valid UTF-8 as it stands. Anything else is checked, and refused rather
                // than repaired: repairing would make different device ids equal (found by fuzzing).
                if ascii { return String(decoding: content, as: UTF8.self) }
                guard let text = String(validating: content, as: UTF8.self) else {
                    throw error("string is not valid UTF-8", at: contentStart)
                }
                return text
            }
            ascii = ascii && byte < 0x80
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string (escape it)", at: position) }
            position += 1
        }
        guard position < bytes.count else { throw error("unterminated string", at: start) }
        var scalars = Array(UnsafeBufferPointer(rebasing: bytes[contentStart..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: scalars, as: UTF8.self) else {
                    throw error("string is not valid UTF-8", at: contentStart)
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw error("unterminated string", at: start) }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escaped)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code), position + 1 < bytes.count,
                        bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    {
                        position += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw error("invalid surrogate pair in \\u escape")
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = UnicodeScalar(code) else { throw error("lone surrogate in \\u escape") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    throw error("invalid escape \\\(Character(UnicodeScalar(escaped)))", at: position - 2)
                }
            default:
                if byte < 0x20 { throw error("control character in string (escape it)") }
                scalars.append(byte)
                position += 1
            }
        }
        throw error("unterminated string", at: start)
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    /// Parses a JSON number, checking its grammar, and returns its correctly rounded value.
    mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        // One pass: the grammar is checked while the digits accumulate, and the common case (at
        // most 15 significant digits, no exponent) is converted on the spot, exactly (Clinger's
        // fast path); anything else goes to `DecimalNumber` and its `strtod` fallback.
        let start = position
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw error("expected a digit in number", at: position)
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var fraction = 0
        if first == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < bytes.count, bytes[position] &- 48 < 10 {
                mantissa = mantissa &* 10 &+ UInt64(bytes[position] &- 48)
                digits += 1
                position += 1
            }
        }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, bytes[position] &- 48 < 10 else {
                throw error("expected a digit after the decimal point")
            }
            while position < bytes.count, bytes[position] &- 48 < 10 {
                let digit = UInt64(bytes[position] &- 48)
                if mantissa != 0 || digit != 0 { digits += 1 }
                mantissa = mantissa &* 10 &+ digit
                fraction += 1
                position += 1
            }
        }
        var exponent = false
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            exponent = true
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count, bytes[position] &- 48 < 10 else {
                throw error("expected a digit in the exponent")
            }
            while position < bytes.count, bytes[position] &- 48 < 10 { position += 1 }
        }
        if !exponent && digits <= 15 && fraction <= 22 {
            let value = Double(mantissa) / DecimalNumber.powersOfTen[fraction]
            return negative ? -value : value
        }
        let value = DecimalNumber.parse(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        guard value.isFinite else { throw error("number out of range", at: start) }
        return value
    }

    /// Skips one value of any kind, checking its syntax.
    mutating func skipValue(depth: Int = 0) throws(JSONSyntaxError) {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "\"")?: _ = try skipString()
        case UInt8(ascii: "-")?, (UInt8(ascii: "0")...UInt8(ascii: "9"))?: _ = try parseNumber()
        default: _ = try parseValue(depth: depth)
        }
    }

    /// Skips a string, returning the range of its raw content when it has no escapes.
    mutating func skipString() throws(JSONSyntaxError) -> Range<Int>? {
        let start = position
        position += 1
        var high: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                // A skipped string is checked as a read one is: a line is valid UTF-8 or refused,
                // whichever member the invalid bytes sit in.
                if high >= 0x80, !Self.isValidUTF8(UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(position - 1)])) {
                    throw error("string is not valid UTF-8", at: start + 1)
                }
                return (start + 1)..<(position - 1)
            }
            high |= byte
            if byte == UInt8(ascii: "\\") {
                position = start
                _ = try parseString()
                return nil
            }
            if byte < 0x20 { throw error("control character in string (escape it)") }
            position += 1
        }
        throw error("unterminated string", at: start)
    }

    /// Whether `bytes` are valid UTF-8, checked without making a String of them: skipped members
    /// are checked on every line and most are thrown away.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

extension JSONValue {
    /// Parses a whole JSON document.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var scanner = JSONScanner(bytes: bytes)
        // A UTF-8 byte-order mark is tolerated at the start of a file.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { scanner.position = 3 }
        let value = try scanner.parseValue()
        scanner.skipWhitespace()
        guard scanner.isAtEnd else { throw scanner.error("unexpected \(scanner.describeNext()) after the JSON value") }
        return value
    }
}

extension JSONScanner {
    /// The number at `position` of `bytes` and the offset just past it, when it is a plain one
    /// (at most 15 digits, no exponent), read with ``parseNumber()``'s own arithmetic so the
    /// value is the same bit for bit; `nil` for any other text, which the caller reads with
    /// ``parseNumber()`` (that reads every number, and reports what is wrong). It has none of the
    /// scanner's error handling, and a line of a feed is mostly numbers.
    @inline(__always)
    static func plainNumber(in bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> (Double, end: Int)? {
        let count = bytes.count
        var end = position
        let negative = end < count && bytes[end] == UInt8(ascii: "-")
        if negative { end += 1 }
        let integerStart = end
        var mantissa: UInt64 = 0
        while end < count, bytes[end] &- 48 < 10 {
            mantissa = mantissa &* 10 &+ UInt64(bytes[end] &- 48)
            end += 1
        }
        var digits = end - integerStart
        // No digit, or a leading zero before more digits: left to parseNumber().
        guard digits > 0, digits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
        var fraction = 0
        if end < count, bytes[end] == UInt8(ascii: ".") {
            end += 1
            let fractionStart = end
            while end < count, bytes[end] &- 48 < 10 {
                mantissa = mantissa &* 10 &+ UInt64(bytes[end] &- 48)
                end += 1
            }
            fraction = end - fractionStart
            guard fraction > 0 else { return nil }
            digits += fraction
        }
        guard digits <= 15, end >= count || bytes[end] | 0x20 != UInt8(ascii: "e") else { return nil }
        // Below 10¹⁵, so exact as a signed integer, which converts in one instruction.
        let value = Double(Int64(bitPattern: mantissa)) / DecimalNumber.powersOfTen[fraction]
        return (negative ? -value : value, end)
    }
}
