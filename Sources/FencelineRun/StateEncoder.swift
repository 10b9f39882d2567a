public import Fenceline
import FencelineFormats

/// The notification state at the end of a run (`--state-out`): the clock, the pending requests
/// with their next trigger dates, and the delivered notifications, newest first.
///
/// ```json
/// {"clock":"2026-03-02T09:00:00Z",
///  "pending":[
///   {"request":"ping","trigger":"timeInterval","next":"2026-03-02T09:05:00Z"}],
///  "delivered":[
///   {"request":"gate","device":"truck-17","trigger":"region","event":"enter","time":"2026-03-02T08:00:10Z","content":{"title":"Gate"}}]}
/// ```
public enum StateEncoder {
    /// The state of `engine` as JSON text, one pending or delivered entry per line.
    public static func encode(_ engine: Engine) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("{")
        writer.key("clock", first: true)
        if let clock = engine.clock { writer.time(clock) } else { writer.raw("null") }
        writer.raw(",\n \"pending\":[")
        for (index, request) in engine.pendingRequests.enumerated() {
            writer.raw(index == 0 ? "\n  {" : ",\n  {")
            writer.key("request", first: true)
            writer.string(request.id)
            writer.key("trigger")
            writer.string(request.trigger.kind.rawValue)
            writer.key("next")
            if let next = engine.nextTriggerDate(forRequest: request.id) {
                writer.time(next)
            } else {
                writer.raw("null")
            }
            if let devices = request.devices {
                writer.key("devices")
                writer.value(.array(devices.map(JSONValue.string)))
            }
            writer.raw("}")
        }
        writer.raw("],\n \"delivered\":")
        writer.raw(String(decoding: deliveredList(engine.deliveredNotifications), as: UTF8.self))
        writer.raw("}\n")
        return writer.bytes
    }

    /// Delivered notifications as a JSON array, one per line: seq (`null` while its instant is
    /// still open, or for one kept by a checkpoint of format 1), request, device, trigger, event,
    /// time, content and the latest response (what `--state-out` and the service's
    /// `GET /v1/delivered` list).
    public static func deliveredList(_ events: [Event]) -> [UInt8] {
        var writer = JSONWriter()
        writer.raw("[")
        for (index, event) in events.enumerated() {
            writer.raw(index == 0 ? "\n  {" : ",\n  {")
            writer.key("seq", first: true)
            if event.sequence > 0 { writer.integer(event.sequence) } else { writer.raw("null") }
            writer.key("request")
            writer.string(event.requestID)
            writer.key("device")
            if let device = event.device { writer.string(device) } else { writer.raw("null") }
            writer.key("trigger")
            writer.string(event.trigger.rawValue)
            writer.key("event")
            writer.string(event.kind.rawValue)
            writer.key("time")
            writer.time(event.time)
            writer.key("content")
            writer.writeContent(event.content)
            if let response = event.response {
                writer.key("response")
                writer.writeAnswer(response)
            }
            writer.raw("}")
        }
        writer.raw("]")
        return writer.bytes
    }
}
