import Testing

@testable import Fenceline

@Suite struct EventValueTests {
    static func plain() -> Event {
        Event(time: Timestamp(microseconds: 0), requestID: "gate", device: "d1", trigger: .region, kind: .enter)
    }

    /// The beacon, content and actions live in a shared box: events stay values, equal (and
    /// hashing alike) by what they hold, however they got there.
    @Test func boxedPartsBehaveAsValues() {
        var titled = Self.plain()
        titled.content = NotificationContent(title: "Hello")
        let copy = titled
        titled.content.title = "Changed"
        #expect(copy.content.title == "Hello")
        #expect(titled.content.title == "Changed")

        var cleared = titled
        cleared.content = NotificationContent()
        #expect(cleared == Self.plain())
        #expect(cleared.hashValue == Self.plain().hashValue)

        var beacon = Self.plain()
        beacon.beacon = BeaconReport(
            identity: BeaconIdentity(uuid: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E", major: 1, minor: 2), rssi: -60,
            distance: 1.5, proximity: .near)
        #expect(beacon != Self.plain())
        #expect(beacon.content.isEmpty && beacon.actions.isEmpty)
        var built = Event(
            time: Timestamp(microseconds: 0), requestID: "gate", device: "d1", trigger: .region, kind: .enter,
            beacon: beacon.beacon)
        #expect(built == beacon)
        built.actions = [NotificationAction(id: "open", title: "Open")]
        #expect(built != beacon && built.beacon == beacon.beacon)
    }

    /// Content is empty only with no field set: each field alone makes it not (an empty request's
    /// content is kept as no box at all, so a field missed here would be dropped).
    @Test func contentIsEmptyOnlyWithNoFieldSet() {
        #expect(NotificationContent().isEmpty)
        let oneField: [NotificationContent] = [
            NotificationContent(title: ""), NotificationContent(subtitle: "s"), NotificationContent(body: "b"),
            NotificationContent(badge: 0), NotificationContent(sound: "default"), NotificationContent(category: "c"),
            NotificationContent(thread: "t"), NotificationContent(userInfo: JSONObject()),
            NotificationContent(mutableContent: true),
            NotificationContent(attachments: [NotificationAttachment(id: "a", url: "https://example.com/a.png")]),
        ]
        for content in oneField {
            #expect(!content.isEmpty, "\(content)")
            #expect(content != NotificationContent())
        }
    }
}
