public import Fenceline
import FencelineFormats
public import Foundation

/// The one place tests build catalogs, readings and engines from (STYLE.md habit 6).
public enum Fixtures {
    /// The package root, found from this file's path.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Data/` under the package root.
    public static let dataDirectory = packageRoot.appendingPathComponent("Data")

    /// 2026-03-02T08:00:00Z, the instant most tests start at.
    public static let t0 = Timestamp(rfc3339: "2026-03-02T08:00:00Z")!

    /// `t0` plus `seconds`.
    public static func at(_ seconds: Double) -> Timestamp {
        t0.advanced(by: TimeSpan(seconds: seconds))
    }

    /// A test fence centre in Amsterdam.
    public static let center = Coordinate(latitude: 52.37, longitude: 4.89)

    /// The point `metres` east (negative: west) and `north` metres north of `origin`, on the sphere.
    public static func offset(_ origin: Coordinate = center, east metres: Double, north: Double = 0) -> Coordinate {
        let angular = (metres * metres + north * north).squareRoot() / Earth.radius
        guard angular > 0 else { return origin }
        let bearing = atan2(metres, north)
        let lat1 = origin.latitude * .pi / 180
        let lon1 = origin.longitude * .pi / 180
        let lat2 = asin(sin(lat1) * cos(angular) + cos(lat1) * sin(angular) * cos(bearing))
        let lon2 = lon1 + atan2(sin(bearing) * sin(angular) * cos(lat1), cos(angular) - sin(lat1) * sin(lat2))
        return Coordinate(latitude: lat2 * 180 / .pi, longitude: lon2 * 180 / .pi)
    }

    /// A circle region request around `center`.
    public static func circle(
        _ id: String = "gate", center: Coordinate = center, radius: Double = 100,
        hysteresis: Hysteresis = .default, devices: [String]? = nil, configure: (inout RegionTrigger) -> Void = { _ in }
    ) -> NotificationRequest {
        var trigger = RegionTrigger(geometry: .circle(center: center, radius: radius), hysteresis: hysteresis)
        configure(&trigger)
        return NotificationRequest(id: id, trigger: .region(trigger), devices: devices)
    }

    /// A fix of `device` at `t0 + seconds`.
    public static func fix(_ device: String, _ seconds: Double, _ coordinate: Coordinate, accuracy: Double? = nil)
        -> Reading
    {
        .fix(Fix(device: device, time: at(seconds), coordinate: coordinate, accuracy: accuracy))
    }

    /// A fix of device `d1` at `t0 + seconds`.
    public static func fix(_ seconds: Double, _ coordinate: Coordinate, accuracy: Double? = nil) -> Reading {
        fix("d1", seconds, coordinate, accuracy: accuracy)
    }

    /// A fix `metres` east of the default centre (so at signed distance `metres - radius` of a circle there).
    public static func fix(_ device: String, _ seconds: Double, east metres: Double, accuracy: Double? = nil) -> Reading
    {
        fix(device, seconds, offset(east: metres), accuracy: accuracy)
    }

    /// A fix of device `d1` `metres` east of the default centre.
    public static func fix(_ seconds: Double, east metres: Double, accuracy: Double? = nil) -> Reading {
        fix("d1", seconds, offset(east: metres), accuracy: accuracy)
    }

    /// Runs `readings` through a fresh engine and returns every event, finishing at `until`.
    public static func run(
        _ requests: [NotificationRequest], _ readings: [Reading], until: Timestamp? = nil,
        configuration: Engine.Configuration = Engine.Configuration()
    ) throws -> [Event] {
        let engine = try Engine(catalog: Catalog(requests: requests), configuration: configuration)
        var events: [Event] = []
        for reading in readings { events += engine.process(reading) }
        events += engine.finish(until: until)
        return events
    }

    /// `event` as a short `kind@seconds` label (with the request and device when several), for readable expectations.
    public static func label(_ event: Event, withRequest: Bool = false, withDevice: Bool = false) -> String {
        var text = event.kind.rawValue
        if let state = event.state { text += ":\(state.rawValue)" }
        if withRequest { text = "\(event.requestID).\(text)" }
        if withDevice { text += "/\(event.device ?? "-")" }
        let seconds = Double(event.time.microseconds - t0.microseconds) / 1_000_000
        return "\(text)@\(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds))"
    }

    /// A scenario folder's catalog and NDJSON readings, with the events a fresh engine fires on them.
    public static func scenario(_ name: String) throws -> (catalog: Catalog, readings: [Reading], events: [Event]) {
        let folder = dataDirectory.appendingPathComponent("scenarios/\(name)")
        let decoder = CatalogDecoder()
        let catalog = try decoder.decode(Array(try Data(contentsOf: folder.appendingPathComponent("triggers.json"))))
            .catalog
        let lines = NDJSONReadingDecoder(requests: .init(decoder: decoder, catalog: catalog))
        var readings: [Reading] = []
        for line in try Data(contentsOf: folder.appendingPathComponent("readings.ndjson")).split(separator: 0x0A) {
            if let reading = try Array(line).withUnsafeBufferPointer({ try lines.decode($0) }) {
                readings.append(reading)
            }
        }
        let engine = try Engine(catalog: catalog)
        var events: [Event] = []
        for reading in readings { events += engine.process(reading) }
        events += engine.finish()
        return (catalog, readings, events)
    }
}
