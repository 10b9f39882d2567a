public import Fenceline

/// Events as NDJSON in SPEC §8's key order: `seq`, `time`, `request`, `device`, (`other`: a
/// proximity pair's other device, SPEC §12), `trigger`,
/// `event`, (`state`), `since`, (`reason`, `visit`, `duration`: SPEC §12), `position`,
/// `distance`, (`beacon`), `content`, (`actions`); a
/// `response` event has `respondsTo`, `action`, (`text`) and `options` after `event` instead.
public struct NDJSONEventEncoder: EventEncoder {
    /// Creates the encoder.
    public init() {}

    public func encode(_ event: Event, into bytes: inout [UInt8]) {
        var writer = JSONWriter()
        swap(&writer.bytes, &bytes)
        writer.raw("{")
        writer.writeEventHeader(event)
        if event.kind == .response, let response = event.response {
            // An answer, not a notification: what was answered and how, no content.
            writer.writeResponse(response)
            writer.raw("}\n")
            swap(&writer.bytes, &bytes)
            return
        }
        if let position = event.position {
            writer.key("position")
            writer.writePosition(position)
        }
        if let distance = event.distance {
            writer.key("distance")
            writer.number(roundedDistance(distance))
        }
        if let beacon = event.beacon {
            writer.key("beacon")
            writer.raw("{")
            writer.key("uuid", first: true)
            writer.string(beacon.identity.uuid)
            writer.key("major")
            writer.raw(String(beacon.identity.major))
            writer.key("minor")
            writer.raw(String(beacon.identity.minor))
            writer.key("rssi")
            writer.number((beacon.rssi * 10).rounded() / 10)
            writer.key("distance")
            writer.number((beacon.distance * 100).rounded() / 100)
            writer.key("proximity")
            writer.string(beacon.proximity.rawValue)
            writer.raw("}")
        }
        writer.key("content")
        writer.writeContent(event.content)
        if !event.actions.isEmpty {
            writer.key("actions")
            writer.writeActions(event.actions)
        }
        writer.raw("}\n")
        swap(&writer.bytes, &bytes)
    }
}

extension NDJSONEventEncoder {
    /// A `response` event that has no `seq` yet (its instant is still open), as the service's
    /// `POST /v1/responses` answers: the §8 members after `seq`, one object.
    package static func unnumberedResponse(_ event: Event) -> [UInt8] {
        var numbered: [UInt8] = []
        NDJSONEventEncoder().encode(event, into: &numbered)
        // Drop `"seq":0,` and the newline: the rest is the event as it will be written.
        let prefix = Array(#"{"seq":0,"#.utf8)
        guard numbered.starts(with: prefix) else { return numbered }
        return [UInt8(ascii: "{")] + numbered.dropFirst(prefix.count).dropLast()
    }
}

extension JSONWriter {
    /// The members every event encoding starts with, in SPEC §8 order: `seq`, `time`, `request`,
    /// `device`, `other` when present (a proximity pair's), `trigger`, `event`, then `state`,
    /// `since`, `reason`, `visit` and `duration` when present (`duration` in seconds).
    mutating func writeEventHeader(_ event: Event) {
        key("seq", first: true)
        integer(event.sequence)
        key("time")
        time(event.time)
        key("request")
        string(event.requestID)
        key("device")
        if let device = event.device { string(device) } else { raw("null") }
        if let other = event.other {
            key("other")
            string(other)
        }
        key("trigger")
        string(event.trigger.rawValue)
        key("event")
        string(event.kind.rawValue)
        if let state = event.state {
            key("state")
            string(state.rawValue)
        }
        if let since = event.since {
            key("since")
            time(since)
        }
        writeStay(event)
    }

    /// `reason`, `visit` and `duration` (SPEC §12), those the event has.
    package mutating func writeStay(_ event: Event, first: Bool = false) {
        var first = first
        if let reason = event.reason {
            key("reason", first: first)
            first = false
            string(reason.rawValue)
        }
        if let visit = event.visit {
            // ``Event/visitID`` written part by part, without making the string.
            key("visit", first: first)
            first = false
            bytes.append(UInt8(ascii: "\""))
            escaped(event.requestID)
            bytes.append(UInt8(ascii: "/"))
            if let device = event.device { escaped(device) }
            bytes.append(UInt8(ascii: "/"))
            integer(visit)
            bytes.append(UInt8(ascii: "\""))
        }
        if let duration = event.duration {
            key("duration", first: first)
            number(duration.seconds)
        }
    }

    mutating func writePosition(_ position: Position) {
        raw("{")
        key("lat", first: true)
        number(position.coordinate.latitude)
        key("lon")
        number(position.coordinate.longitude)
        if let accuracy = position.accuracy {
            key("accuracy")
            number(accuracy)
        }
        raw("}")
    }

    /// A `response` event's own members: `respondsTo`, `action`, `text` (when given), `options`.
    package mutating func writeResponse(_ response: ResponseReport) {
        key("respondsTo")
        integer(response.respondsTo)
        key("action")
        string(response.action)
        if let text = response.text {
            key("text")
            string(text)
        }
        key("options")
        value(.array(response.options.map(JSONValue.string)))
    }

    /// What a delivered notification keeps of its latest answer: `{"action", "text", "time"}`.
    package mutating func writeAnswer(_ response: ResponseReport) {
        raw("{")
        key("action", first: true)
        string(response.action)
        if let text = response.text {
            key("text")
            string(text)
        }
        key("time")
        time(response.time)
        raw("}")
    }

    /// Content as the catalog spells it (SPEC §2, §8), the fields it has: events carry it so, and
    /// ``RequestEncoder`` writes a request's with it.
    package mutating func writeContent(_ content: NotificationContent) {
        raw("{")
        var first = true
        func member(_ name: StaticString) {
            key(name, first: first)
            first = false
        }
        if let title = content.title { member("title"); string(title) }
        if let subtitle = content.subtitle { member("subtitle"); string(subtitle) }
        if let body = content.body { member("body"); string(body) }
        if let badge = content.badge { member("badge"); raw(String(badge)) }
        if let sound = content.sound { member("sound"); string(sound) }
        if let category = content.category { member("category"); string(category) }
        if let thread = content.thread { member("thread"); string(thread) }
        if let userInfo = content.userInfo { member("userInfo"); value(.object(userInfo)) }
        if content.mutableContent { member("mutableContent"); raw("true") }
        if !content.attachments.isEmpty { member("attachments"); writeAttachments(content.attachments) }
        raw("}")
    }

    /// Attachments as the catalog spells them: `{"id", "url", "type", "options"}`.
    package mutating func writeAttachments(_ attachments: [NotificationAttachment]) {
        raw("[")
        for (index, attachment) in attachments.enumerated() {
            raw(index == 0 ? "{" : ",{")
            key("id", first: true)
            string(attachment.id)
            key("url")
            string(attachment.url)
            if let type = attachment.type {
                key("type")
                string(type)
            }
            if attachment.hasOptions {
                key("options")
                raw("{")
                var first = true
                if let hidden = attachment.thumbnailHidden {
                    key("thumbnailHidden", first: first)
                    first = false
                    raw(hidden ? "true" : "false")
                }
                if let rect = attachment.thumbnailClippingRect {
                    key("thumbnailClippingRect", first: first)
                    first = false
                    raw("{")
                    key("x", first: true)
                    number(rect.x)
                    key("y")
                    number(rect.y)
                    key("width")
                    number(rect.width)
                    key("height")
                    number(rect.height)
                    raw("}")
                }
                if let time = attachment.thumbnailTime {
                    key("thumbnailTime", first: first)
                    number(time)
                }
                raw("}")
            }
            raw("}")
        }
        raw("]")
    }

    mutating func writeActions(_ actions: [NotificationAction]) {
        raw("[")
        for (index, action) in actions.enumerated() {
            if index > 0 { raw(",") }
            raw("{")
            key("id", first: true)
            string(action.id)
            key("title")
            string(action.title)
            if !action.options.isEmpty {
                key("options")
                value(.array(action.options.map(JSONValue.string)))
            }
            if let input = action.textInput {
                key("textInput")
                raw("{")
                key("button", first: true)
                string(input.button)
                key("placeholder")
                string(input.placeholder)
                raw("}")
            }
            raw("}")
        }
        raw("]")
    }
}
