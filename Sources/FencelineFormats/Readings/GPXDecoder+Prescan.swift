extension GPXDecoder {
    /// Why a document is refused before libxml2 sees it, and at which line.
    ///
    /// Entity declarations are refused outright. libxml2 stops exponential expansion (billion
    /// laughs) by itself, and `XMLParser` on Linux hands no entity text to its delegate, so memory
    /// is safe; but each reference to a large internal entity is parsed again, without limit, and
    /// a 10 MB document of references takes hours. GPX needs no entities (the five predefined
    /// ones and character references need no declaration), so none may be declared.
    ///
    /// The scan must read the bytes as libxml2 will: UTF-8 and the ASCII-compatible encodings
    /// byte by byte, UTF-16 by code unit. Encodings in which `<!ENTITY` would not look like those
    /// bytes (UCS-4, EBCDIC, UTF-7, a UTF-16 label on 8-bit text or the reverse) are refused too.
    static func refusal(of bytes: [UInt8]) -> (line: Int, message: String)? {
        var scan = Prescan()
        return scan.feed(bytes)
    }

    /// The refusal scan over a document read chunk by chunk: the first chunk (which must hold the
    /// XML declaration, when there is one) settles the encoding, and every chunk is searched for
    /// `<!ENTITY` before libxml2 is handed it, across chunk boundaries.
    struct Prescan {
        private var started = false
        /// For UTF-16 text, its byte order (`true`: little-endian); `nil` for 8-bit text.
        private var utf16: Bool?
        /// A UTF-16 chunk's odd last byte, waiting for its pair.
        private var carry: UInt8?
        /// Whether the last UTF-16 chunk ended in a high surrogate, waiting for its low one.
        private var highSurrogatePending = false
        /// The last bytes of text scanned, so a declaration split across chunks is still seen.
        private var tail: [UInt8] = []
        private var line = 1

        /// Scans the next chunk; returns why the document is refused, if it is.
        mutating func feed(_ bytes: [UInt8]) -> (line: Int, message: String)? {
            if !started {
                started = true
                if let refusal = settleEncoding(bytes) { return refusal }
            }
            var bytes = bytes[...]
            let text: [UInt8]
            if let utf16 {
                var joined = carry.map { [$0] } ?? []
                joined += bytes
                carry = joined.count % 2 == 1 ? joined.removeLast() : nil
                let atStart = tail.isEmpty && line == 1
                // libxml2 2.9 dereferences null on a surrogate without its pair (found by fuzzing).
                if let unit = Self.unpairedSurrogate(in: joined, littleEndian: utf16, pending: &highSurrogatePending) {
                    let before = Self.units(of: Array(joined[..<(unit * 2)]), littleEndian: utf16, atStart: atStart)
                    return (
                        line + before.count { $0 == 0x0A },
                        "the UTF-16 text has a surrogate without its pair (invalid UTF-16), which the XML parser crashes on"
                    )
                }
                text = Self.units(of: joined, littleEndian: utf16, atStart: atStart)
            } else {
                if tail.isEmpty && line == 1 && bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
                text = Array(bytes)
            }
            let entity = Array("<!ENTITY".utf8)
            let scanned = tail + text
            for index in scanned.indices {
                if index >= tail.count && scanned[index] == 0x0A { line += 1 }
                if scanned[index] == 0x3C, Self.isEmptyInstruction(scanned[index...]) {
                    return (
                        line,
                        "a processing instruction without data (<?name?>) is refused: the XML parser crashes on it; GPX needs none"
                    )
                }
                if scanned[index] == 0x3C, scanned[index...].starts(with: entity) {
                    return (
                        line,
                        "the document declares an entity (<!ENTITY …>); GPX needs none, and they are refused so that entity expansion cannot stall the parse"
                    )
                }
            }
            tail = Array(scanned.suffix(entity.count - 1))
            return nil
        }

        /// Refuses encodings in which `<!ENTITY` would not look like its ASCII bytes, from the
        /// document's first bytes and its XML declaration.
        private mutating func settleEncoding(_ bytes: [UInt8]) -> (line: Int, message: String)? {
            let unsupported = "; save the file as UTF-8"
            for start: [UInt8] in [
                [0, 0, 0, 0x3C], [0x3C, 0, 0, 0], [0, 0, 0x3C, 0], [0, 0x3C, 0, 0], [0, 0, 0xFE, 0xFF],
            ]
            where bytes.starts(with: start) {
                return (1, "UCS-4 text is not supported" + unsupported)
            }
            if bytes.starts(with: [0x4C, 0x6F, 0xA7, 0x94]) {
                return (1, "EBCDIC text is not supported" + unsupported)
            }
            if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0x3C, 0x00]) {
                utf16 = true
            } else if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0x00, 0x3C]) {
                utf16 = false
            }
            let text = utf16.map { Self.units(of: bytes, littleEndian: $0, atStart: true) } ?? bytes
            // An XML declaration that never closes cannot be read here, and libxml2 itself has
            // crashed on one naming an encoding (found by fuzzing): refused.
            var start = text[...]
            if start.starts(with: [0xEF, 0xBB, 0xBF]) { start = start.dropFirst(3) }
            if start.starts(with: Array("<?xml".utf8)), start.firstRange(of: Array("?>".utf8)) == nil {
                return (1, "the XML declaration (<?xml …) is not closed with ?>")
            }
            guard let encoding = GPXDecoder.declaredEncoding(text) else { return nil }
            let known = utf16 != nil ? GPXDecoder.isUTF16(encoding) : GPXDecoder.isASCIICompatible(encoding)
            guard known else {
                let form = utf16 != nil ? "UTF-16 text" : "8-bit text"
                return (
                    1,
                    "the XML declaration names encoding \"\(encoding)\", which is not supported for \(form)"
                        + unsupported
                )
            }
            return nil
        }

        /// Whether `text` starts with `<?name?>`: FoundationXML passes libxml2's null data for
        /// it to `strlen` (found by fuzzing).
        private static func isEmptyInstruction(_ text: ArraySlice<UInt8>) -> Bool {
            guard text.count >= 5, text[text.startIndex + 1] == UInt8(ascii: "?") else { return false }
            var index = text.startIndex + 2
            while index < text.endIndex, index - text.startIndex < 200 {
                let byte = text[index]
                let isNameByte =
                    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == 0x5F || byte == 0x3A || byte == 0x2D || byte == 0x2E || byte >= 0x80
                guard isNameByte else { break }
                index += 1
            }
            guard index > text.startIndex + 2, index + 1 < text.endIndex else { return false }
            return text[index] == UInt8(ascii: "?") && text[index + 1] == UInt8(ascii: ">")
        }

        /// The index of the first code unit of `bytes` that breaks a surrogate pair: a low
        /// surrogate with no high one before it, or anything but a low one after a high one.
        /// `pending` carries a high surrogate that ended the previous chunk into the next.
        static func unpairedSurrogate(in bytes: [UInt8], littleEndian: Bool, pending: inout Bool) -> Int? {
            var index = 0
            while index + 1 < bytes.count {
                let (low, high) = littleEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
                let unit = UInt16(high) << 8 | UInt16(low)
                let isLow = (0xDC00...0xDFFF).contains(unit)
                if pending != isLow { return index / 2 }
                pending = (0xD800...0xDBFF).contains(unit)
                index += 2
            }
            return nil
        }

        /// UTF-16 code units as one byte each: ASCII as is, anything else 0x80 (a BOM at the
        /// document's start is dropped).
        private static func units(of bytes: [UInt8], littleEndian: Bool, atStart: Bool) -> [UInt8] {
            var text: [UInt8] = []
            text.reserveCapacity(bytes.count / 2)
            var index = atStart && (bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])) ? 2 : 0
            while index + 1 < bytes.count {
                let (low, high) = littleEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
                text.append(high == 0 && low < 0x80 ? low : 0x80)
                index += 2
            }
            return text
        }
    }

    /// Whether `name` is an encoding that keeps ASCII characters as single ASCII bytes: UTF-8,
    /// ASCII, ISO 8859, Latin, Windows/CP code pages, Shift JIS, EUC, GB, Big5, KOI8. Matched by
    /// hand (ASCII letters in any case) because a Regex is parsed anew on every use and is not
    /// Sendable, so it cannot be kept in a static; that parse was most of a small document's time.
    static func isASCIICompatible(_ name: String) -> Bool {
        let name = asciiLowercased(name)
        let whole: Set<String> = [
            "utf8", "utf-8", "ascii", "us-ascii", "shift_jis", "sjis", "euc-jp", "euc-kr", "euc-cn", "gb2312", "gbk",
            "gb18030", "big5", "koi8-r", "koi8-u",
        ]
        if whole.contains(name) { return true }
        var rest = Substring(name)
        func take(_ prefix: String) -> Bool {
            guard rest.hasPrefix(prefix) else { return false }
            rest = rest.dropFirst(prefix.count)
            return true
        }
        func skipSeparator(_ separators: String) {
            if let first = rest.first, separators.contains(first) { rest = rest.dropFirst() }
        }
        let oneOrTwoDigits = { (1...2).contains(rest.count) && rest.allSatisfy { ("0"..."9").contains($0) } }
        if take("iso") {
            skipSeparator("-_")
            guard take("8859") else { return false }
            skipSeparator("-_")
            return oneOrTwoDigits()
        }
        if take("latin") {
            skipSeparator("-")
            return oneOrTwoDigits()
        }
        if take("windows") || take("cp") {
            skipSeparator("-")
            return rest == "874" || (rest.count == 4 && rest.hasPrefix("125") && ("0"..."8").contains(rest.last!))
        }
        return false
    }

    /// Whether `name` is UTF-16, optionally with its byte order (`utf-16`, `UTF16LE`, …).
    static func isUTF16(_ name: String) -> Bool {
        ["utf16", "utf-16", "utf16le", "utf-16le", "utf16be", "utf-16be"].contains(asciiLowercased(name))
    }

    private static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// The `encoding` of the XML declaration at the start of `text`, if it has one: the first
    /// `encoding` followed by `=` and a quoted value (spaces allowed around the `=`).
    static func declaredEncoding(_ text: [UInt8]) -> String? {
        var text = text[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard text.starts(with: Array("<?xml".utf8)), let end = text.firstRange(of: Array("?>".utf8)) else {
            return nil
        }
        let declaration = text[..<end.lowerBound]
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        var searchFrom = declaration.startIndex
        while let keyword = declaration[searchFrom...].firstRange(of: Array("encoding".utf8)) {
            searchFrom = keyword.upperBound
            var index = keyword.upperBound
            while index < declaration.endIndex, isSpace(declaration[index]) { index += 1 }
            guard index < declaration.endIndex, declaration[index] == UInt8(ascii: "=") else { continue }
            index += 1
            while index < declaration.endIndex, isSpace(declaration[index]) { index += 1 }
            guard index < declaration.endIndex, declaration[index] == 0x22 || declaration[index] == 0x27 else {
                continue
            }
            let quote = declaration[index]
            guard let close = declaration[(index + 1)...].firstIndex(of: quote) else { continue }
            return String(decoding: declaration[(index + 1)..<close], as: UTF8.self)
        }
        return nil
    }
}
