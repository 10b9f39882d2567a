public import Fenceline

/// How events are written (`--format`).
public enum EventFormat: String, Hashable, Sendable, CaseIterable {
    /// One JSON object per line (SPEC §8).
    case ndjson
    /// Aligned columns for people.
    case text
    /// One APNs request per line: the device, `apns-collapse-id` and the JSON payload.
    case apns
    /// One GeoJSON FeatureCollection: a Point feature per event.
    case geojson

    /// Creates the encoder for this format.
    public func makeEncoder() -> any EventEncoder {
        switch self {
        case .ndjson: NDJSONEventEncoder()
        case .text: TextEventEncoder()
        case .apns: APNsEventEncoder()
        case .geojson: GeoJSONEventEncoder()
        }
    }
}

/// Turns events into output bytes. Some formats wrap the stream (``header``/``footer``).
public protocol EventEncoder {
    /// Bytes before the first event.
    func header() -> [UInt8]
    /// Appends one event.
    func encode(_ event: Event, into bytes: inout [UInt8])
    /// Bytes after the last event.
    func footer() -> [UInt8]
}

extension EventEncoder {
    public func header() -> [UInt8] { [] }
    public func footer() -> [UInt8] { [] }
}

extension Event {
    /// The event's kind as the text output and the picture's tooltips name it: `enter`, or
    /// `state:inside` for a state event.
    package var kindLabel: String {
        kind == .state ? "state:\(state?.rawValue ?? "")" : kind.rawValue
    }
}

/// Distances leave rounded to decimetres: finer digits are noise for a GPS fix.
package func roundedDistance(_ distance: Double) -> Double {
    (distance * 10).rounded() / 10
}
