import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// Documents that are cut short, not XML, or built to hurt the parser: never a crash or a hang,
/// the points before the damage are kept and one error item ends the list.
@Suite struct GPXDecoderHostileInputTests {
    static func decode(_ text: String) -> [GPXDecoder.Item] {
        GPXDecoder.decode(Array(text.utf8), fileDevice: "file", deviceOverride: nil)
    }

    /// How often `needle` occurs in `bytes`.
    static func count(_ needle: String, in bytes: some Collection<UInt8>) -> Int {
        let needle = Array(needle.utf8)
        let bytes = Array(bytes)
        guard bytes.count >= needle.count else { return 0 }
        return (0...(bytes.count - needle.count)).count { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test func aTruncatedOneLineTrackKeepsItsCompletePoints() throws {
        let bytes = try GPXFiles.bytes("around-visnjan-with-car")
        let prefix = Array(bytes.prefix(bytes.count / 2))
        let complete = Self.count("</trkpt>", in: prefix)
        #expect(complete > 40)
        let items = GPXDecoder.decode(prefix, fileDevice: "visnjan", deviceOverride: nil)
        #expect(items.count == complete + 1)
        #expect(items.dropLast().allSatisfy { $0.fix?.device == "2020-12-18 07:24:29" })
        let last = try #require(items.last)
        #expect(last.line == 1)
        #expect(last.error?.code == .malformed)
        #expect(last.error?.message.contains("the file ends inside it (libxml2 error 73)") == true, "\(last)")
    }

    @Test func aTruncatedMultiLineTrackEndsAtTheLineWhereTheParserStopped() throws {
        let bytes = try GPXFiles.bytes("korita-zbevnica")
        let prefix = Array(bytes.prefix(60_000))
        let items = GPXDecoder.decode(prefix, fileDevice: "korita", deviceOverride: nil)
        #expect(items.count == Self.count("</trkpt>", in: prefix) + Self.count("</wpt>", in: prefix) + 1)
        #expect(items.last?.line == Self.count("\n", in: prefix) + 1)
        #expect(items.last?.error?.code == .malformed)
        // The last <name> before byte 60,000 is "ACTIVE LOG #2".
        #expect(items.dropLast().last?.fix?.device == "ACTIVE LOG #2")
    }

    @Test(arguments: [
        "", "hello world", #"{"device":"a","time":1,"lat":1,"lon":2}"#, "\u{0}\u{1}\u{2}\u{3}\u{4}",
        // XMLParser waits for four bytes before it starts libxml2.
        "<", "<gp", "<gpx", "<gpx>", "<gpx><trk>",
    ])
    func inputThatIsNotXMLIsOneErrorItem(text: String) {
        let items = Self.decode(text)
        #expect(items.count == 1)
        #expect(items.first?.line == 1)
        #expect(items.first?.error?.code == .malformed)
    }

    @Test func anotherXMLDocumentIsRefusedByItsRoot() {
        let items = Self.decode(
            #"<kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><trkpt lat="1" lon="2"/></Placemark></kml>"#)
        #expect(items.count == 1)
        #expect(items.first?.error?.message.contains("not <gpx>") == true)
    }

    @Test func theFirstXMLErrorStopsTheDocument() {
        let point = #"<wpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></wpt>"#
        let mismatched = Self.decode("<gpx>\n\(point)\n<trk><name>a</nam></trk>\n\(point)\n</gpx>")
        #expect(mismatched.map(\.line) == [2, 3])
        #expect(mismatched.last?.error?.message.contains("does not match") == true)
        let trailing = Self.decode("<gpx>\n\(point)\n</gpx>\n<gpx>\(point)</gpx>")
        #expect(trailing.count == 2)
        #expect(trailing.first?.fix != nil)
        #expect(trailing.last?.error?.code == .malformed)
    }

    @Test func aNamespacePrefixNobodyDeclaredIsNoError() {
        let items = Self.decode(
            #"<gpx><wpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time><ext:a>1</ext:a></wpt></gpx>"#)
        #expect(items.count == 1)
        #expect(items.first?.fix != nil)
    }

    @Test func randomBytesAndMutatedTracksNeverCrash() throws {
        var random = SplitMix(state: 42)
        let track = try GPXFiles.bytes("track-with-empty-segment")
        for round in 0..<200 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...3000, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            } else {
                bytes = track
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            let items = GPXDecoder.decode(bytes, fileDevice: "f", deviceOverride: nil)
            #expect(items.allSatisfy { $0.line >= 1 })
            #expect(items.dropLast().allSatisfy { $0.error?.code != .malformed })
        }
    }

    @Test func exponentialEntityExpansionIsRefusedBeforeParsing() {
        var entities = #"<!ENTITY lol0 "lol">"#
        for level in 1...9 {
            entities += "\n<!ENTITY lol\(level) \"\(String(repeating: "&lol\(level - 1);", count: 10))\">"
        }
        let items = Self.decode(
            """
            <?xml version="1.0"?>
            <!DOCTYPE gpx [\(entities)]>
            <gpx><wpt lat="1" lon="2"><time>2020-01-01T00:00:00Z</time></wpt>
            <trk><name>&lol9;</name><trkseg><trkpt lat="1" lon="2"><time>2020-01-01T00:00:01Z</time></trkpt></trkseg></trk>
            </gpx>
            """)
        #expect(items.count == 1)
        #expect(items.first?.line == 2)
        #expect(items.first?.error?.code == .malformed)
        #expect(items.first?.error?.message.contains("declares an entity") == true)
    }

    @Test func quadraticEntityExpansionIsRefusedBeforeParsing() {
        // 50,000 references to a 50,000-character entity: libxml2 would parse 2.5 GB of text from a
        // 200 kB document (it takes seconds; ten times the size takes hours).
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx [<!ENTITY a "\(String(repeating: "A", count: 50_000))">]>
            <gpx><trk><name>\(String(repeating: "&a;", count: 50_000))</name><trkseg>
            <trkpt lat="1" lon="2"><time>2020-01-01T00:00:01Z</time></trkpt></trkseg></trk></gpx>
            """
        let items = Self.decode(text)
        #expect(items.count == 1)
        #expect(items.first?.error?.message.contains("declares an entity") == true)
        // The same declaration in UTF-16 is found too.
        let utf16 = Array(text.data(using: .utf16BigEndian)!)
        #expect(GPXDecoder.decode(utf16, fileDevice: "f", deviceOverride: nil).map(\.line) == [2])
    }

    @Test func attributeDefaultsCannotInflateTheDocument() {
        let points = String(
            repeating: #"<trkpt lat="1" lon="2"><time>2020-01-01T00:00:01Z</time></trkpt>"#, count: 200)
        let items = Self.decode(
            """
            <!DOCTYPE gpx [<!ATTLIST trkpt pad CDATA "\(String(repeating: "A", count: 20_000))">]>
            <gpx><trk><trkseg>\(points)</trkseg></trk></gpx>
            """)
        #expect(items.last?.error?.message.contains("more text than it holds") == true)
        #expect(items.count < 100)
    }

    @Test func externalDTDsAreNotLoaded() throws {
        // If the DTD were read, its attribute default would give the point its latitude.
        let dtd = Scratch.root.appendingPathComponent(
            "fenceline-gpx-\(UInt32.random(in: 0...UInt32.max)).dtd")
        try #"<!ATTLIST trkpt lat CDATA "45">"#.write(to: dtd, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: dtd) }
        let items = Self.decode(
            """
            <?xml version="1.0"?>
            <!DOCTYPE gpx SYSTEM "\(dtd.absoluteString)">
            <gpx><trk><trkseg><trkpt lon="2"><time>2020-01-01T00:00:01Z</time></trkpt></trkseg></trk></gpx>
            """)
        #expect(items.map(\.error?.field) == ["lat"])
    }

    @Test(
        arguments: [
            ([0x00, 0x00, 0x00, 0x3C, 0x00, 0x00, 0x00, 0x67], "UCS-4"),
            ([0x4C, 0x6F, 0xA7, 0x94, 0x93, 0x40], "EBCDIC"),
            (Array(#"<?xml version="1.0" encoding="UTF-7"?><gpx/>"#.utf8), "\"UTF-7\""),
            (
                Array(#"<?xml version='1.0' encoding='UTF-16'?><gpx/>"#.utf8),
                "\"UTF-16\", which is not supported for 8-bit"
            ),
            (Array(#"<?xml version="1.0" encoding="IBM037"?><gpx/>"#.utf8), "\"IBM037\""),
            (
                [0xFF, 0xFE] + Array(#"<?xml version="1.0" encoding="ISO-8859-1"?>"#.utf16).flatMap { [UInt8($0), 0] },
                "not supported for UTF-16"
            ),
        ] as [([UInt8], String)])
    func encodingsThatCouldHideADeclarationAreRefused(bytes: [UInt8], reason: String) {
        let items = GPXDecoder.decode(bytes, fileDevice: "f", deviceOverride: nil)
        #expect(items.count == 1)
        #expect(items.first?.error?.message.contains(reason) == true, "\(String(describing: items.first))")
    }

    /// libxml2 2.9 crashed (a null dereference) on UTF-16 with a surrogate missing its pair; the
    /// prescan refuses it, naming the line, in either byte order and across chunk boundaries.
    @Test(arguments: [false, true])
    func unpairedSurrogatesAreRefused(littleEndian: Bool) throws {
        func utf16(_ units: [UInt16]) -> [UInt8] {
            units.flatMap { littleEndian ? [UInt8($0 & 0xFF), UInt8($0 >> 8)] : [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
        let head = Array("<gpx>\n<trk><name>".utf16)
        let tail = Array("</name></trk>\n</gpx>".utf16)
        let cases: [[UInt16]] = [
            [0xFEFF] + head + [0xDADA] + tail,  // a high surrogate alone (the fuzzer's find)
            [0xFEFF] + head + [0xDC00, 0x41] + tail,  // a low one alone
            [0xFEFF] + head + [0xD83D, 0xD83D, 0xDE00] + tail,  // two highs
        ]
        for units in cases {
            let items = GPXDecoder.decode(utf16(units), fileDevice: "f", deviceOverride: nil)
            #expect(items.count == 1)
            #expect(items.first?.line == 2)
            #expect(items.first?.error?.message.contains("surrogate without its pair") == true, "\(items)")
        }
        // A high surrogate ending one chunk, and no low one starting the next.
        let document = utf16([0xFEFF] + head + [0xD83D, 0x41] + tail)
        let split = (1 + head.count + 1) * 2
        var chunks = [Array(document[..<split]), Array(document[split...])]
        let items = GPXDecoder.decode(
            chunks: { chunks.isEmpty ? nil : chunks.removeFirst() }, fileDevice: "f", deviceOverride: nil)
        #expect(items.first?.error?.message.contains("surrogate without its pair") == true, "\(items)")
        // A pair (an emoji in the name) is fine.
        let good = Array(
            #"<gpx><trk><name>😀</name><trkseg><trkpt lat="1" lon="2"><time>2020-01-01T00:00:01Z</time></trkpt></trkseg></trk></gpx>"#
                .utf16)
        let fixes = GPXDecoder.decode(utf16([0xFEFF] + good), fileDevice: "f", deviceOverride: nil)
        #expect(fixes.count == 1)
        #expect(fixes.first?.error == nil, "\(fixes)")
    }

    @Test func deepNestingIsRefused() {
        let depth = 10_000
        let items = Self.decode(
            "<gpx>" + String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth) + "</gpx>")
        #expect(items.count == 1)
        #expect(items.first?.error?.message.contains("nested more than \(GPXDecoder.maximumDepth) deep") == true)
    }

    @Test func overlongTextIsAnErrorNotAnAllocation() {
        let long = String(repeating: "x", count: GPXDecoder.maximumFieldBytes + 1)
        let text = """
            <gpx><trk><name>\(long)</name><trkseg><trkpt lat="1" lon="2"><time>2020-01-01T00:00:01Z</time></trkpt>
            </trkseg></trk><wpt lat="1" lon="2"><time>\(long)</time></wpt></gpx>
            """
        let items = Self.decode(text)
        #expect(items.map(\.error?.field) == ["name", "time"])
        #expect(items.first?.error?.message.contains("--device") == true)
        let named = GPXDecoder.decode(Array(text.utf8), fileDevice: "f", deviceOverride: "car")
        #expect(named.first?.fix?.device == "car")
    }
}
