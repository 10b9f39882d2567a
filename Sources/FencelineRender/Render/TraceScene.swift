import Fenceline
import FencelineFormats
import Foundation

/// What a picture shows, gathered from the catalog, the fixes and the events before any pixel is
/// placed: tracks in a fixed device order, fences with longitudes in one display range, and each
/// event pinned to a coordinate.
struct TraceScene {
    /// One device's fixes in time order, with longitudes in the display range.
    struct Track {
        var device: String
        var fixes: [Fix]
    }

    /// A fence to draw; polygon and corridor longitudes are unwrapped part by part next to the
    /// display range, so a shape crossing ±180° stays in one piece.
    struct Fence {
        var id: String
        var geometry: RegionGeometry
    }

    /// An event and where it is drawn.
    struct Mark {
        var event: Event
        var coordinate: Coordinate
        /// True when the event had no position and sits at its device's fix nearest in time.
        var isEstimated: Bool
    }

    var tracks: [Track] = []
    var fences: [Fence] = []
    var marks: [Mark] = []
    /// Events with neither a position nor a fix of their device to stand in for one.
    var unplacedEvents: [Event] = []
    /// Time, calendar and beacon requests: no geometry to draw.
    var requestsWithoutFence = 0
    var fixCount = 0
    var firstTime: Timestamp?
    var lastTime: Timestamp?
    var from0To360 = false
    /// The box to fit, in display longitudes; `nil` when there is nothing to draw.
    var bounds: GeoBounds?

    init(catalog: Catalog, fixes: [Fix], events: [Event]) {
        from0To360 = Self.prefers0To360(catalog: catalog, fixes: fixes, events: events)
        let range = from0To360
        let wrap = { (longitude: Double) in MapProjection.wrap(longitude, from0To360: range) }
        collectTracks(fixes, wrap: wrap)
        collectFences(catalog, wrap: wrap)
        placeEvents(events, wrap: wrap)
        for event in events {
            if firstTime.map({ event.time < $0 }) ?? true { firstTime = event.time }
            if lastTime.map({ event.time > $0 }) ?? true { lastTime = event.time }
        }
        bounds = measure()
    }

    /// Whether 0…360 gives a narrower box than −180…180 for every longitude in the input.
    private static func prefers0To360(catalog: Catalog, fixes: [Fix], events: [Event]) -> Bool {
        var signed = (low: Double.infinity, high: -Double.infinity)
        var positive = signed
        func include(_ longitude: Double) {
            let a = MapProjection.wrap(longitude, from0To360: false)
            let b = MapProjection.wrap(longitude, from0To360: true)
            signed = (min(signed.low, a), max(signed.high, a))
            positive = (min(positive.low, b), max(positive.high, b))
        }
        for fix in fixes { include(fix.coordinate.longitude) }
        for event in events { if let position = event.position { include(position.coordinate.longitude) } }
        for request in catalog.requests {
            guard case .region(let region) = request.trigger else { continue }
            switch region.geometry {
            case .circle(let center, _): include(center.longitude)
            case .polygons(let parts): for part in parts { for point in part.first ?? [] { include(point.longitude) } }
            case .corridor(let path, _): for point in path { include(point.longitude) }
            }
        }
        return positive.high - positive.low < signed.high - signed.low
    }

    private mutating func collectTracks(_ fixes: [Fix], wrap: (Double) -> Double) {
        var byDevice: [String: [(index: Int, fix: Fix)]] = [:]
        for (index, var fix) in fixes.enumerated() where fix.coordinate.latitude.isFinite {
            fix.coordinate.longitude = wrap(fix.coordinate.longitude)
            byDevice[fix.device, default: []].append((index, fix))
            if firstTime.map({ fix.time < $0 }) ?? true { firstTime = fix.time }
            if lastTime.map({ fix.time > $0 }) ?? true { lastTime = fix.time }
        }
        fixCount = byDevice.values.reduce(0) { $0 + $1.count }
        tracks = byDevice.keys.sorted(by: Self.naturalOrder).map { device in
            // Input order breaks ties, so equal times keep the order the engine applied them in.
            let ordered = byDevice[device]!.sorted { ($0.fix.time, $0.index) < ($1.fix.time, $1.index) }
            return Track(device: device, fixes: ordered.map(\.fix))
        }
    }

    private mutating func collectFences(_ catalog: Catalog, wrap: (Double) -> Double) {
        for request in catalog.requests {
            guard case .region(let region) = request.trigger else {
                requestsWithoutFence += 1
                continue
            }
            let geometry: RegionGeometry
            switch region.geometry {
            case .circle(let center, let radius):
                geometry = .circle(
                    center: Coordinate(latitude: center.latitude, longitude: wrap(center.longitude)), radius: radius)
            case .polygons(let parts):
                geometry = .polygons(parts.map { Self.unwrapped($0, wrap: wrap) })
            case .corridor(let path, let width):
                geometry = .corridor(path: Self.unwrapped([path], chained: true, wrap: wrap)[0], width: width)
            }
            fences.append(Fence(id: request.id, geometry: geometry))
        }
    }

    /// The rings with longitudes within half a turn of the first one's first vertex (or, `chained`,
    /// of the previous vertex), shifted so that vertex lies in the display range.
    private static func unwrapped(_ rings: [[Coordinate]], chained: Bool = false, wrap: (Double) -> Double)
        -> [[Coordinate]]
    {
        guard let first = rings.first?.first else { return rings }
        let shift = wrap(first.longitude) - first.longitude
        return rings.map { ring in
            var reference = first.longitude
            return ring.map { point in
                var longitude = point.longitude
                let delta = longitude - reference
                if abs(delta) > 180 { longitude -= 360 * (delta / 360).rounded() }
                if chained { reference = longitude }
                return Coordinate(latitude: point.latitude, longitude: longitude + shift)
            }
        }
    }

    /// Device ids in natural order: digit runs compare as numbers, so `d2` comes before `d10`.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        var left = Array(a.unicodeScalars)[...]
        var right = Array(b.unicodeScalars)[...]
        func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
        while let l = left.first, let r = right.first {
            if isDigit(l) && isDigit(r) {
                let leftRun = left.prefix(while: isDigit)
                let rightRun = right.prefix(while: isDigit)
                let leftTrimmed = leftRun.drop(while: { $0 == "0" })
                let rightTrimmed = rightRun.drop(while: { $0 == "0" })
                if leftTrimmed.count != rightTrimmed.count { return leftTrimmed.count < rightTrimmed.count }
                for (x, y) in zip(leftTrimmed, rightTrimmed) where x != y { return x.value < y.value }
                left = left.dropFirst(leftRun.count)
                right = right.dropFirst(rightRun.count)
            } else {
                if l != r { return l.value < r.value }
                left = left.dropFirst()
                right = right.dropFirst()
            }
        }
        if left.isEmpty != right.isEmpty { return left.isEmpty }
        return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) { $0.value < $1.value }
    }
}
