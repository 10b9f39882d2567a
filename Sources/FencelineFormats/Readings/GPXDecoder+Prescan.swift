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
        let unsupported = "; save the file as UTF-8"
        for start: [UInt8] in [
            [0, 0, 0, 0x3C], [0x3C, 0, 0, 0], [0, 0, 0x3C, 0], [0, 0x3C, 0, 0], [0, 0, 0xFE, 0xFF],
        ]
        where bytes.starts(with: start) {
            return (1, "UCS-4 text is not supported" + unsupported)
        }
        if bytes.starts(with: [0x4C, 0x6F, 0xA7, 0x94]) { return (1, "EBCDIC text is not supported" + unsupported) }
        // The text as bytes, one per character; UTF-16 units above ASCII become 0x80.
        let text: [UInt8]
        let isUTF16: Bool
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0x3C, 0x00]) {
            (text, isUTF16) = (units(of: bytes, littleEndian: true), true)
        } else if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0x00, 0x3C]) {
            (text, isUTF16) = (units(of: bytes, littleEndian: false), true)
        } else {
            (text, isUTF16) = (bytes, false)
        }
        if let encoding = declaredEncoding(text) {
            let known =
                isUTF16
                ? (try? #/(?i)utf-?16(?:le|be)?/#.wholeMatch(in: encoding)) != nil
                : (try? asciiCompatibleEncoding.wholeMatch(in: encoding)) != nil
            guard known else {
                let form = isUTF16 ? "UTF-16 text" : "8-bit text"
                return (
                    1,
                    "the XML declaration names encoding \"\(encoding)\", which is not supported for \(form)"
                        + unsupported
                )
            }
        }
        let entity = Array("<!ENTITY".utf8)
        var line = 1
        for index in text.indices {
            if text[index] == 0x0A { line += 1 }
            if text[index] == 0x3C, text[index...].starts(with: entity) {
                return (
                    line,
                    "the document declares an entity (<!ENTITY …>); GPX needs none, and they are refused so that entity expansion cannot stall the parse"
                )
            }
        }
        return nil
    }

    /// Encodings that keep ASCII characters as single ASCII bytes.
    private static var asciiCompatibleEncoding: Regex<Substring> {
        #/(?i)utf-?8|(?:us-)?ascii|iso[-_]?8859[-_]?[0-9]{1,2}|latin-?[0-9]{1,2}|(?:windows|cp)-?(?:125[0-8]|874)|shift_jis|sjis|euc-(?:jp|kr|cn)|gb2312|gbk|gb18030|big5|koi8-[ru]/#
    }

    /// UTF-16 code units as one byte each: ASCII as is, anything else 0x80 (a BOM is dropped).
    private static func units(of bytes: [UInt8], littleEndian: Bool) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count / 2)
        var index = bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) ? 2 : 0
        while index + 1 < bytes.count {
            let (low, high) = littleEndian ? (bytes[index], bytes[index + 1]) : (bytes[index + 1], bytes[index])
            text.append(high == 0 && low < 0x80 ? low : 0x80)
            index += 2
        }
        return text
    }

    /// The `encoding` of the XML declaration at the start of `text`, if it has one.
    private static func declaredEncoding(_ text: [UInt8]) -> String? {
        var text = text[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        guard text.starts(with: Array("<?xml".utf8)), let end = text.firstRange(of: Array("?>".utf8)) else {
            return nil
        }
        let declaration = String(decoding: text[..<end.lowerBound], as: UTF8.self)
        guard let match = declaration.firstMatch(of: #/encoding\s*=\s*(?:"([^"]*)"|'([^']*)')/#) else { return nil }
        return String(match.output.1 ?? match.output.2 ?? "")
    }
}
