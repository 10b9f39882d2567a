import Fenceline
import FencelineFormats
import Testing

/// SPEC §12 "Where" for proximity triggers: the fields and defaults, and each bad value reported
/// with the request id and the JSON path.
@Suite struct ProximityDecodingTests {
    func decode(_ text: String) throws(CatalogError) -> Catalog {
        try CatalogDecoder().decode(Array(text.utf8)).catalog
    }

    func issues(_ text: String) -> [CatalogIssue] { CatalogDecoderTests().issues(text) }

    @Test func fieldsAndDefaults() throws {
        let catalog = try decode(
            #"{"requests":[{"id":"p","trigger":{"type":"proximity","near":40,"among":["tag-*","lead"]}},"#
                + #"{"id":"q","filters":{"minDistance":5},"trigger":{"type":"proximity","near":40,"far":60,"#
                + #""among":["tag-*"],"to":["truck-*"],"maxAge":90,"enterDelay":5,"exitDelay":10,"repeats":false,"#
                + #""notifyOnEntry":false}}]}"#)
        guard case .proximity(let first) = catalog.requests[0].trigger,
            case .proximity(let second) = catalog.requests[1].trigger
        else {
            Issue.record("not proximity triggers")
            return
        }
        #expect(first == ProximityTrigger(near: 40, among: [DevicePattern("tag-*"), DevicePattern("lead")]))
        #expect(first.far == 40 && first.to == nil && first.maxAge == nil && first.repeats)
        #expect(
            second
                == ProximityTrigger(
                    near: 40, far: 60, among: [DevicePattern("tag-*")], to: [DevicePattern("truck-*")],
                    maxAge: TimeSpan(seconds: 90), enterDelay: TimeSpan(seconds: 5), exitDelay: TimeSpan(seconds: 10),
                    notifyOnEntry: false, repeats: false))
        #expect(catalog.requests[1].filters == PositionFilters(minDistance: 5))
    }

    @Test func patternsMatchIdsAndPrefixes() {
        #expect(DevicePattern("tag-*").matches("tag-1") && DevicePattern("tag-*").matches("tag-"))
        #expect(!DevicePattern("tag-*").matches("tag") && !DevicePattern("tag-*").matches("atag-1"))
        #expect(DevicePattern("*").matches("anything") && DevicePattern("lead").matches("lead"))
        #expect(!DevicePattern("lead").matches("leader"))
    }

    @Test(
        arguments: [
            (#""near":0,"among":["a"]"#, "requests[0].trigger.near", "> 0"),
            (#""near":-5,"among":["a"]"#, "requests[0].trigger.near", "> 0"),
            (#""near":50,"far":40,"among":["a"]"#, "requests[0].trigger.far", "≥ near"),
            (#""among":["a"]"#, "requests[0].trigger.near", "missing field \"near\""),
            (#""near":50"#, "requests[0].trigger.among", "missing field \"among\""),
            (#""near":50,"among":[]"#, "requests[0].trigger.among", "at least one"),
            (#""near":50,"among":["a"],"to":[]"#, "requests[0].trigger.to", "at least one"),
            (#""near":50,"among":["t*g"]"#, "requests[0].trigger.among[0]", "may only end an id"),
            (#""near":50,"among":["a"],"to":["x","*-y"]"#, "requests[0].trigger.to[1]", "may only end an id"),
            (#""near":50,"among":[""]"#, "requests[0].trigger.among[0]", "non-empty"),
            (#""near":50,"among":[7]"#, "requests[0].trigger.among[0]", "expected a string"),
            (#""near":50,"among":["a"],"maxAge":0"#, "requests[0].trigger.maxAge", "> 0 seconds"),
            (#""near":50,"among":["a"],"enterDelay":-1"#, "requests[0].trigger.enterDelay", "≥ 0 seconds"),
            (#""near":"x","among":["a"]"#, "requests[0].trigger.near", "expected a number"),
        ])
    func badFieldsNameTheRequestAndPath(fields: String, path: String, message: String) {
        let found = issues(#"{"requests":[{"id":"p","trigger":{"type":"proximity","# + fields + "}}]}")
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.requestID == "p")
        #expect(found.first?.path == path)
        #expect(found.first?.message.contains(message) == true, "\(found.first?.message ?? "")")
    }

    @Test func eventsNameTheOtherDevice() {
        let event = Event(
            sequence: 3, time: Timestamp(seconds: 1_772_438_400), requestID: "meet", device: "tag-1",
            trigger: .proximity, kind: .enter, since: Timestamp(seconds: 1_772_438_400),
            position: Position(coordinate: Coordinate(latitude: 52.37, longitude: 4.89)), distance: 12.34,
            content: NotificationContent(body: "tag-1 and truck-2"), reason: .observed, visit: 1, other: "truck-2")
        var ndjson: [UInt8] = []
        NDJSONEventEncoder().encode(event, into: &ndjson)
        #expect(
            String(decoding: ndjson, as: UTF8.self)
                == #"{"seq":3,"time":"2026-03-02T08:00:00Z","request":"meet","device":"tag-1","other":"truck-2","trigger":"proximity","event":"enter","since":"2026-03-02T08:00:00Z","reason":"observed","visit":"meet/tag-1/1","position":{"lat":52.37,"lon":4.89},"distance":12.3,"content":{"body":"tag-1 and truck-2"}}"#
                + "\n")
        var text: [UInt8] = []
        TextEventEncoder().encode(event, into: &text)
        #expect(String(decoding: text, as: UTF8.self).contains("tag-1          with truck-2        12.3 m apart"))
        var apns: [UInt8] = []
        APNsEventEncoder().encode(event, into: &apns)
        #expect(String(decoding: apns, as: UTF8.self).contains(#""other":"truck-2","reason":"observed""#))
    }
}
