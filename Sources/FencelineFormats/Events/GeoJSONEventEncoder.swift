public import Fenceline

/// Events as one GeoJSON FeatureCollection (`--format geojson`), for geojson.io, QGIS or any map:
/// each event is a Feature whose geometry is the Point where it happened (`null` for events without
/// a position, such as time and calendar fires) and whose properties are the event's fields,
/// flattened for attribute tables, plus simplestyle `marker-color`/`marker-symbol` hints.
///
/// ```json
/// {"type":"FeatureCollection","features":[
/// {"type":"Feature","geometry":{"type":"Point","coordinates":[13.7157,45.2690]},"properties":{"seq":1,"time":"…","request":"home","device":"car","trigger":"region","event":"enter",…}}
/// ]}
/// ```
public final class GeoJSONEventEncoder: EventEncoder {
    private var written = 0

    /// Creates the encoder; one per output, as it tracks the separators between features.
    public init() {}

    public func header() -> [UInt8] { Array(#"{"type":"FeatureCollection","features":["#.utf8) }

    public func footer() -> [UInt8] { Array((written == 0 ? "]}\n" : "\n]}\n").utf8) }

    public func encode(_ event: Event, into bytes: inout [UInt8]) {
        var writer = JSONWriter()
        swap(&writer.bytes, &bytes)
        defer { swap(&writer.bytes, &bytes) }
        writer.raw(written == 0 ? "\n" : ",\n")
        written += 1
        writer.raw(#"{"type":"Feature","geometry":"#)
        if let position = event.position {
            writer.raw(#"{"type":"Point","coordinates":["#)
            writer.number(position.coordinate.longitude)
            writer.raw(",")
            writer.number(position.coordinate.latitude)
            writer.raw("]}")
        } else {
            writer.raw("null")
        }
        writer.raw(#","properties":{"#)
        writer.writeEventHeader(event)
        if event.kind == .response, let response = event.response {
            writer.key("respondsTo")
            writer.integer(response.respondsTo)
            writer.key("action")
            writer.string(response.action)
            if let text = response.text {
                writer.key("text")
                writer.string(text)
            }
        }
        if let distance = event.distance {
            writer.key("distance")
            writer.number(roundedDistance(distance))
        }
        if let accuracy = event.position?.accuracy {
            writer.key("accuracy")
            writer.number(accuracy)
        }
        if let beacon = event.beacon {
            writer.key("beaconUUID")
            writer.string(beacon.identity.uuid)
            writer.key("beaconMajor")
            writer.raw(String(beacon.identity.major))
            writer.key("beaconMinor")
            writer.raw(String(beacon.identity.minor))
            writer.key("rssi")
            writer.number((beacon.rssi * 10).rounded() / 10)
            writer.key("beaconDistance")
            writer.number((beacon.distance * 100).rounded() / 100)
            writer.key("proximity")
            writer.string(beacon.proximity.rawValue)
        }
        let content = event.content
        for (name, value) in [
            ("title", content.title), ("subtitle", content.subtitle), ("body", content.body),
            ("category", content.category), ("thread", content.thread),
        ] {
            guard let value else { continue }
            writer.raw(",\"\(name)\":")
            writer.string(value)
        }
        if !content.attachments.isEmpty {
            writer.key("attachments")
            writer.writeAttachments(content.attachments)
        }
        writer.key("marker-color")
        writer.string(Self.colour(of: event.kind))
        writer.key("marker-symbol")
        writer.string(Self.symbol(of: event.kind))
        writer.raw("}}")
    }

    /// The colour a map gives each kind of event (a palette of its own: `fenceline render` uses
    /// `RenderStyle.colour(of:)`, whose greens and reds differ).
    static func colour(of kind: EventKind) -> String {
        switch kind {
        case .enter: "#1a9850"
        case .exit: "#d73027"
        case .dwell: "#4575b4"
        case .cross: "#984ea3"
        case .state: "#7f7f7f"
        case .fire: "#fdae61"
        case .response: "#2b8cbe"
        }
    }

    /// A Maki icon name for each kind of event.
    static func symbol(of kind: EventKind) -> String {
        switch kind {
        case .enter: "entrance"
        case .exit: "roadblock"
        case .dwell: "clock"
        case .cross: "cross"
        case .state: "circle"
        case .fire: "alarm"
        case .response: "chat"
        }
    }
}
