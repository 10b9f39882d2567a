import Fenceline
import FencelineFormats
import Foundation
import Testing

/// Issue 26, defect 9: input whose meaning is unclear is refused with a located error rather than
/// read one way silently: a member given twice, a CSV device name NDJSON would not accept, an
/// XML value too long for libxml2.
@Suite struct AmbiguousInputTests {
    static func decode(_ line: String) throws(LineError) -> Reading? {
        try Array(line.utf8).withUnsafeBufferPointer { bytes throws(LineError) in
            try NDJSONReadingDecoder().decode(bytes)
        }
    }

    @Test(arguments: [
        (#"{"device":"d","time":1,"lat":95,"lat":52.37,"lon":4.8}"#, "lat"),
        (#"{"device":"d","device":"e","time":1,"lat":52,"lon":4.8}"#, "device"),
        (#"{"op":"tick","op":"tick","time":1}"#, "op"),
    ])
    func aReadingFieldGivenTwiceIsABadLine(line: String, field: String) {
        #expect(throws: LineError.self) { try Self.decode(line) }
        do {
            _ = try Self.decode(line)
        } catch {
            #expect(error.field == field)
            #expect(error.message.contains("appears twice"))
        }
    }

    /// One line is one record (hostile corpus): a part of another kind is not dropped silently.
    @Test(arguments: [
        (#"{"device":"d","time":1,"lat":52,"lon":4.8,"op":"tick"}"#, "op"),
        (
            #"{"device":"d","time":1,"lat":52,"lon":4.8,"beacon":{"uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","major":1,"minor":1,"rssi":-60}}"#,
            "beacon"
        ),
        (
            #"{"device":"d","time":1,"adv":"0201","beacon":{"uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","major":1,"minor":1,"rssi":-60}}"#,
            "adv"
        ),
    ])
    func aLineOfTwoKindsIsABadLine(line: String, field: String) {
        do {
            _ = try Self.decode(line)
            Issue.record("accepted: \(line)")
        } catch {
            #expect(error.field == field)
        }
    }

    @Test func aCatalogMemberGivenTwiceIsRefusedEvenWhenEscaped() {
        for text in [
            #"{"requests":[{"id":"a","id":"b","trigger":{"type":"timeInterval","seconds":60}}]}"#,
            #"{"requests":[{"id":"a","i\u0064":"b","trigger":{"type":"timeInterval","seconds":60}}]}"#,
            #"{"requests":[{"id":"a","trigger":{"type":"region","center":{"lat":1,"lon":2},"radius":5,"radius":500}}]}"#,
        ] {
            #expect(throws: CatalogError.self) { try CatalogDecoder().decode(Array(text.utf8)) }
            do {
                _ = try CatalogDecoder().decode(Array(text.utf8))
            } catch {
                #expect(error.issues.first?.description.contains("appears twice") == true, "\(error)")
            }
        }
        // Distinct names that share a prefix, and the same name in two objects, are fine.
        let fine =
            #"{"requests":[{"id":"a","idx":1,"trigger":{"type":"timeInterval","seconds":60}},{"id":"b","trigger":{"type":"timeInterval","seconds":60}}]}"#
        #expect((try? CatalogDecoder().decode(Array(fine.utf8))) != nil)
    }

    @Test(arguments: [[UInt8](ascii: "d\u{0}x"), [0xFF, 0xFE], [0x64, 0x1B, 0x5B]])
    func aCSVDeviceNameMustBeValidTextWithoutControls(name: [UInt8]) throws {
        let header = Array("device,time,lat,lon".utf8)
        let decoder = try header.withUnsafeBufferPointer { bytes throws(LineError) in
            try CSVReadingDecoder(header: bytes)
        }
        let row = name + Array(",1,52.3,4.8".utf8)
        #expect(throws: LineError.self) {
            try row.withUnsafeBufferPointer { bytes throws(LineError) in try decoder.decode(bytes) }
        }
    }

    /// FoundationXML leaks a little with each XML warning (found by fuzzing): a document of
    /// thousands of them is refused after a thousand, the points before kept.
    @Test func aFloodOfXMLWarningsIsStopped() {
        let point = #"<trkpt lat="1" lon="2"><time>2026-01-01T00:00:01Z</time></trkpt>"#
        let text =
            #"<?xml version="1.0"?><gpx><trk><trkseg>"# + point + String(repeating: "<x:p/>", count: 1500)
            + "</trkseg></trk></gpx>"
        let items = GPXDecoder.decode(Array(text.utf8), fileDevice: "f", deviceOverride: nil)
        #expect(items.first?.fix != nil)
        #expect(items.last?.error?.message.contains("over 1000 XML warnings") == true, "\(items.last as Any)")
    }

    /// Found by fuzzing: libxml2 crashed on an unclosed declaration naming an encoding.
    @Test func anUnclosedXMLDeclarationIsRefused() {
        let items = GPXDecoder.decode(
            Array(#"<?xml version="1.0" encoding="UTF-7""#.utf8), fileDevice: "f", deviceOverride: nil)
        #expect(items.count == 1)
        #expect(items.first?.error?.message.contains("not closed") == true)
    }

    /// Found by fuzzing: FoundationXML crashes on a processing instruction without data.
    @Test func anEmptyProcessingInstructionIsRefused() {
        let text = "<?xml version=\"1.0\"?>\n<?pi?>\n<gpx><trk><trkseg></trkseg></trk></gpx>"
        let items = GPXDecoder.decode(Array(text.utf8), fileDevice: "f", deviceOverride: nil)
        #expect(items.count == 1)
        #expect(items.first?.line == 2)
        #expect(items.first?.error?.message.contains("processing instruction without data") == true)
    }

    @Test func anOverlongGPXAttributeSaysSo() {
        let text =
            #"<?xml version="1.0"?><gpx><trk><trkseg><trkpt lat=""# + String(repeating: "1", count: 12_000_000)
            + #"" lon="2"><time>2026-01-01T00:00:01Z</time></trkpt></trkseg></trk></gpx>"#
        let items = GPXDecoder.decode(Array(text.utf8), fileDevice: "f", deviceOverride: nil)
        #expect(items.last?.error?.message.contains("longer than the XML parser accepts") == true, "\(items)")
    }
}

extension [UInt8] {
    fileprivate init(ascii text: String) { self = Array(text.utf8) }
}
