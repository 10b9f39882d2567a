import Foundation
import Fenceline
import FencelineFormats
import Testing

/// SPEC §12's `reason`, `visit` and `duration` in every output format.
@Suite struct StayEncodingTests {
    static let exit = Event(
        sequence: 7, time: Timestamp(rfc3339: "2026-03-02T08:02:00Z")!, requestID: "depot", device: "truck-17",
        trigger: .region, kind: .exit, since: Timestamp(rfc3339: "2026-03-02T08:01:40Z")!,
        position: Position(coordinate: Coordinate(latitude: 52.37, longitude: 4.89)), distance: 31.2,
        content: NotificationContent(
            title: "Depot",
            userInfo: JSONObject([("visit", .string("mine")), ("site", .number(JSONNumber(text: "4", value: 4)))])),
        reason: .delayed, visit: 3, duration: TimeSpan(seconds: 95.5))

    func encoded(_ encoder: some EventEncoder, _ event: Event = Self.exit) -> String {
        var bytes: [UInt8] = []
        encoder.encode(event, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func ndjsonAndGeoJSONCarryThemAfterSince() {
        #expect(
            encoded(NDJSONEventEncoder()).contains(
                #""since":"2026-03-02T08:01:40Z","reason":"delayed","visit":"depot/truck-17/3","duration":95.5,"position""#
            ))
        #expect(
            encoded(GeoJSONEventEncoder()).contains(#""reason":"delayed","visit":"depot/truck-17/3","duration":95.5"#))
    }

    @Test func aVisitOfNamesThatNeedEscapesIsTheEscapedVisitID() throws {
        var event = Self.exit
        event.requestID = "gate \"A\"\\1"
        event.device = "van\u{1}/7"
        let line = encoded(NDJSONEventEncoder(), event)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["visit"] as? String == event.visitID)
        #expect(line.contains(#""visit":"gate \"A\"\\1/van\u0001/7/3""#))
    }

    @Test func numbersAreWrittenAsFormatWritesThem() {
        let values: [Double] = [0, -0.0, 3, -12, 31.2, -0.5, 1e15 - 1, 1e15, -1e15, 1e16, 2.5e-7, .infinity, .nan]
        for value in values {
            var writer = JSONWriter()
            writer.number(value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == JSONWriter.format(value), "\(value)")
        }
    }

    @Test func textShowsThemAtTheEnd() {
        #expect(encoded(TextEventEncoder()).hasSuffix("(since 2026-03-02T08:01:40Z)  [delayed, visit 3, 95.5 s]\n"))
    }

    @Test func apnsPutsThemBesideApsBeforeTheUserInfoKeys() {
        let line = encoded(APNsEventEncoder())
        #expect(line.contains(#""reason":"delayed","visit":"depot/truck-17/3","duration":95.5,"site":4}}"#))
        #expect(!line.contains("mine"))  // the event's own key wins over a userInfo key of that name
    }
}
