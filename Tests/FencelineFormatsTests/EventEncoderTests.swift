import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

@Suite struct EventEncoderTests {
    static let event = Event(
        sequence: 12, time: Timestamp(rfc3339: "2026-03-02T08:00:30.25Z")!, requestID: "depot", device: "truck-17",
        trigger: .region, kind: .exit, since: Timestamp(rfc3339: "2026-03-02T08:00:10Z")!,
        position: Position(coordinate: Coordinate(latitude: 52.3712, longitude: 4.8951), accuracy: 8),
        distance: 31.2449,
        content: NotificationContent(
            title: "Depot", body: "Left \"depot\"\n", badge: 1, category: "arrival",
            userInfo: JSONObject([
                (key: "site", value: .number(JSONNumber(text: "4", value: 4))), (key: "a", value: .null),
            ])),
        actions: [NotificationAction(id: "ack", title: "OK", options: ["foreground"])])

    func encode(_ event: Event, _ encoder: some EventEncoder) -> String {
        var bytes: [UInt8] = []
        encoder.encode(event, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func ndjsonFollowsSpecOrderAndFormats() {
        #expect(
            encode(Self.event, NDJSONEventEncoder()) == #"""
                {"seq":12,"time":"2026-03-02T08:00:30.250Z","request":"depot","device":"truck-17","trigger":"region","event":"exit","since":"2026-03-02T08:00:10Z","position":{"lat":52.3712,"lon":4.8951,"accuracy":8},"distance":31.2,"content":{"title":"Depot","body":"Left \"depot\"\n","badge":1,"category":"arrival","userInfo":{"site":4,"a":null}},"actions":[{"id":"ack","title":"OK","options":["foreground"]}]}

                """#)
    }

    /// Sequence numbers, times and strings are written straight into the output (digits, time
    /// fields, unescaped runs); what a JSON parser reads back is the event's own values, at the
    /// edges too: extreme numbers, years beyond 9999 and before 1970, strings needing escapes.
    @Test func writtenValuesReadBackAsTheEventsOwn() throws {
        let times = [
            Self.event.time, Timestamp(microseconds: 253_402_300_800_000_000), Timestamp(microseconds: -1_500),
        ]
        let devices = ["truck-17", "a\"b\\c\nd", "ünï\u{1}\u{7F}", "", String(repeating: "x", count: 40)]
        for sequence in [0, 7, -3, Int.max, Int.min] {
            for (time, device) in zip(times + times, devices) {
                var event = Self.event
                event.sequence = sequence
                event.time = time
                event.since = time
                event.device = device
                let line = encode(event, NDJSONEventEncoder())
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                #expect((object["seq"] as? NSNumber)?.int64Value == Int64(sequence), "\(line)")
                #expect(object["time"] as? String == time.rfc3339, "\(line)")
                #expect(object["since"] as? String == time.rfc3339, "\(line)")
                #expect(object["device"] as? String == device, "\(line)")
            }
        }
    }

    @Test func stateAndUnscopedEvents() {
        var state = Self.event
        state.kind = .state
        state.state = .inside
        state.since = nil
        state.actions = []
        state.content = NotificationContent()
        #expect(encode(state, NDJSONEventEncoder()).contains(#""event":"state","state":"inside","position""#))
        var fire = state
        fire.kind = .fire
        fire.trigger = .timeInterval
        fire.state = nil
        fire.device = nil
        fire.position = nil
        fire.distance = nil
        #expect(
            encode(fire, NDJSONEventEncoder()).contains(
                #""device":null,"trigger":"timeInterval","event":"fire","content":{}}"#))
    }

    @Test func textIsOneReadableLine() {
        let line = encode(Self.event, TextEventEncoder())
        #expect(line.hasPrefix("#12  "))
        #expect(line.contains("exit"))
        #expect(line.contains("31.2 m out"))
        #expect(line.contains("(since 2026-03-02T08:00:10Z)"))
        // Control characters in content would break the line; they print as spaces.
        #expect(line.hasSuffix("Depot: Left \"depot\"  (since 2026-03-02T08:00:10Z)\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
    }
}

@Suite struct APNsEventEncoderTests {
    @Test func payloadUsesTheDocumentedKeys() throws {
        var event = EventEncoderTests.event
        event.content.subtitle = "Arrivals"
        event.content.sound = "default"
        event.content.thread = "depot"
        event.content.mutableContent = true
        event.content.userInfo = JSONObject([
            (key: "site", value: .number(JSONNumber(text: "4", value: 4))), (key: "aps", value: .string("ignored")),
        ])
        var bytes: [UInt8] = []
        APNsEventEncoder().encode(event, into: &bytes)
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any]
        #expect(object["device"] as? String == "truck-17")
        #expect(object["apns-collapse-id"] as? String == "depot")
        let payload = object["payload"] as! [String: Any]
        #expect(Set(payload.keys) == ["aps", "site"])
        let aps = payload["aps"] as! [String: Any]
        #expect(Set(aps.keys) == ["alert", "badge", "sound", "category", "thread-id", "mutable-content"])
        #expect(
            aps["alert"] as? [String: String] == ["title": "Depot", "subtitle": "Arrivals", "body": "Left \"depot\"\n"])
        #expect(aps["badge"] as? Int == 1)
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(aps["thread-id"] as? String == "depot")
        #expect(payload["site"] as? Int == 4)
    }

    @Test func contentWithoutTextHasNoAlert() throws {
        var event = EventEncoderTests.event
        event.content = NotificationContent()
        event.device = nil
        var bytes: [UInt8] = []
        APNsEventEncoder().encode(event, into: &bytes)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"device":null,"apns-collapse-id":"depot","payload":{"aps":{}}}"# + "\n")
    }
}
