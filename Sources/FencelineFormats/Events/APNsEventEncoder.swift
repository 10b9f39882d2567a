public import Fenceline

/// Events as APNs requests, one JSON object per line:
///
/// ```json
/// {"device":"truck-17","apns-collapse-id":"depot","payload":{"aps":{"alert":{"title":"Depot","body":"Arrived"},"badge":1,"sound":"default","category":"arrival","thread-id":"depot"},"site":4}}
/// ```
///
/// `payload` is the request body Apple documents (`aps.alert.title/subtitle/body`, `badge`,
/// `sound`, `category`, `thread-id`, `mutable-content` when the content asks for it or has
/// attachments), the content's `attachments` beside `aps` (SPEC §8: for the app's notification
/// service extension to fetch), the event's `other`, `reason`, `visit` and `duration` (SPEC §12) and the
/// content's `userInfo` keys beside them (a `userInfo` key named `aps`, `attachments` when there
/// are some, or one the event's own keys take, is left out). The collapse
/// id is the request id, so a newer notification of a request replaces the older one on the device.
/// `response` events (answers that came from a device) are not written.
public struct APNsEventEncoder: EventEncoder {
    /// Creates the encoder.
    public init() {}

    public func encode(_ event: Event, into bytes: inout [UInt8]) {
        // A response came from the device: there is nothing to push.
        guard event.kind != .response else { return }
        var writer = JSONWriter()
        swap(&writer.bytes, &bytes)
        writer.raw("{")
        writer.key("device", first: true)
        if let device = event.device { writer.string(device) } else { writer.raw("null") }
        writer.key("apns-collapse-id")
        writer.string(event.requestID)
        writer.key("payload")
        writer.raw("{")
        writer.key("aps", first: true)
        writer.raw("{")
        let content = event.content
        var first = true
        func member(_ name: StaticString) {
            writer.key(name, first: first)
            first = false
        }
        if content.title != nil || content.subtitle != nil || content.body != nil {
            member("alert")
            writer.raw("{")
            var firstAlert = true
            for (name, value) in [("title", content.title), ("subtitle", content.subtitle), ("body", content.body)] {
                guard let value else { continue }
                if !firstAlert { writer.raw(",") }
                firstAlert = false
                writer.string(name)
                writer.raw(":")
                writer.string(value)
            }
            writer.raw("}")
        }
        if let badge = content.badge { member("badge"); writer.raw(String(badge)) }
        if let sound = content.sound { member("sound"); writer.string(sound) }
        if let category = content.category { member("category"); writer.string(category) }
        if let thread = content.thread { member("thread-id"); writer.string(thread) }
        // Attachments are fetched by the app's notification service extension, which runs only
        // for a payload with mutable-content.
        if content.mutableContent || !content.attachments.isEmpty { member("mutable-content"); writer.raw("1") }
        writer.raw("}")
        if !content.attachments.isEmpty {
            writer.raw(",")
            writer.key("attachments", first: true)
            writer.writeAttachments(content.attachments)
        }
        if let other = event.other {
            writer.raw(",")
            writer.key("other", first: true)
            writer.string(other)
        }
        if event.reason != nil || event.visit != nil || event.duration != nil {
            writer.raw(",")
            writer.writeStay(event, first: true)
        }
        let taken = Set(
            [
                event.other.map { _ in "other" }, event.reason.map { _ in "reason" }, event.visit.map { _ in "visit" },
                event.duration.map { _ in "duration" },
            ].compactMap { $0 })
        for (key, value) in content.userInfo?.members ?? []
        where key != "aps" && (key != "attachments" || content.attachments.isEmpty) && !taken.contains(key) {
            writer.raw(",")
            writer.string(key)
            writer.raw(":")
            writer.value(value)
        }
        writer.raw("}}\n")
        swap(&writer.bytes, &bytes)
    }
}
