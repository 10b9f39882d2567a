import Foundation
import Testing

@testable import FencelineFormats

/// The encoding names are matched by hand (a Regex cannot be kept in a static); these check the
/// hand matcher against the patterns it replaced, on every name they list and on random ones.
@Suite struct GPXEncodingNameTests {
    static let listed = [
        "UTF-8", "utf8", "ascii", "US-ASCII", "ISO-8859-1", "iso_8859_15", "ISO8859-2", "latin1", "LATIN-9",
        "windows-1252", "CP1250", "cp-874", "Windows-1258", "Shift_JIS", "SJIS", "EUC-JP", "euc-kr", "EUC-CN",
        "GB2312", "GBK", "gb18030", "Big5", "KOI8-R", "koi8-u", "UTF-16", "utf16le", "UTF-16BE", "utf-16le",
        "UTF-7", "IBM037", "UCS-4", "windows-1259", "cp1249", "iso-8859-123", "latin", "latin-", "iso-8859",
        "shiftjis", "eucjp", "koi8r", "utf-16-le", "UTF-32", "", "utf--8", "iso--8859-1", "cp-8740",
    ]

    @Test func theHandMatcherAgreesWithThePatterns() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("utf-_816lbeasciso859windowscp1247shjkgrnkoi0".utf8) + [0x4B, 0xC3, 0xA9]
        var names = Self.listed
        for _ in 0..<4_000 {
            let base = Array(Self.listed.randomElement(using: &generator)!.utf8)
            var bytes = base
            for _ in 0..<Int.random(in: 0...2, using: &generator) {
                let position = Int.random(in: 0...bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes.insert(alphabet.randomElement(using: &generator)!, at: position)
                case 1 where position < bytes.count: bytes.remove(at: position)
                default: if position < bytes.count { bytes[position] = alphabet.randomElement(using: &generator)! }
                }
            }
            names.append(String(decoding: bytes, as: UTF8.self))
        }
        for name in names {
            let ascii = (try? Self.asciiCompatible.wholeMatch(in: name)) != nil
            let utf16 = (try? #/(?i)utf-?16(?:le|be)?/#.wholeMatch(in: name)) != nil
            #expect(GPXDecoder.isASCIICompatible(name) == ascii, "\(name)")
            #expect(GPXDecoder.isUTF16(name) == utf16, "\(name)")
        }
    }

    @Test(
        arguments: [
            (#"<?xml version="1.0" encoding="ISO-8859-1"?>"#, "ISO-8859-1"),
            (#"<?xml version='1.0' encoding = 'utf-8' ?>"#, "utf-8"),
            ("<?xml version=\"1.0\" encoding\t=\n\"x\"?>", "x"),
            (#"<?xml encodingX="a" encoding="b"?>"#, "b"),
            (#"<?xml encoding=b encoding="c"?>"#, "c"),
            (#"<?xml encoding="open?>"#, nil),
            (#"<?xml version="1.0"?>"#, nil),
            (#"<?xml encoding="a"#, nil),
            ("\u{FEFF}<?xml encoding='é'?>", "é"),
        ] as [(String, String?)])
    func theDeclaredEncodingIsTheFirstQuotedValue(declaration: String, expected: String?) {
        let found = GPXDecoder.declaredEncoding(Array(declaration.utf8))
        let pattern = #/encoding\s*=\s*(?:"([^"]*)"|'([^']*)')/#
        var text = Substring(declaration)
        if text.first == "\u{FEFF}" { text = text.dropFirst() }
        let byPattern =
            text.hasPrefix("<?xml") && text.contains("?>")
            ? text[..<text.range(of: "?>")!.lowerBound].firstMatch(of: pattern).map {
                String($0.output.1 ?? $0.output.2 ?? "")
            }
            : nil
        #expect(found == expected)
        #expect(found == byPattern)
    }

    static var asciiCompatible: Regex<Substring> {
        #/(?i)utf-?8|(?:us-)?ascii|iso[-_]?8859[-_]?[0-9]{1,2}|latin-?[0-9]{1,2}|(?:windows|cp)-?(?:125[0-8]|874)|shift_jis|sjis|euc-(?:jp|kr|cn)|gb2312|gbk|gb18030|big5|koi8-[ru]/#
    }
}
