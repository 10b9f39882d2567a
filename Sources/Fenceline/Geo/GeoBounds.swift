import Foundation

/// A latitude/longitude box; `west` may exceed `east` by wrapping: a box that crosses ±180° is
/// kept unwrapped (`west` < -180 or `east` > 180) and split by ``normalizedParts``.
public struct GeoBounds: Hashable, Sendable {
    /// The southern edge in degrees.
    public var south: Double
    /// The northern edge in degrees.
    public var north: Double
    /// The western edge in degrees, possibly below -180 for a box crossing the antimeridian.
    public var west: Double
    /// The eastern edge in degrees, possibly above 180 for a box crossing the antimeridian.
    public var east: Double

    /// Creates a box from its four edges.
    public init(south: Double, north: Double, west: Double, east: Double) {
        self.south = south
        self.north = north
        self.west = west
        self.east = east
    }

    /// The box around a sequence of (unwrapped) coordinates.
    init(around points: some Sequence<Coordinate>) {
        var bounds = GeoBounds(south: .infinity, north: -.infinity, west: .infinity, east: -.infinity)
        for point in points { bounds.include(point) }
        self = bounds
    }

    mutating func include(_ point: Coordinate) {
        south = min(south, point.latitude)
        north = max(north, point.latitude)
        west = min(west, point.longitude)
        east = max(east, point.longitude)
    }

    /// The box grown by `metres` on every side (clamped at the poles; full width near them).
    func expanded(byMetres metres: Double) -> GeoBounds {
        guard metres > 0 else { return self }
        let dLat = metres / Earth.metresPerDegree
        let widest = max(abs(south - dLat), abs(north + dLat))
        guard widest < 89.9 else {
            return GeoBounds(south: max(-90, south - dLat), north: min(90, north + dLat), west: -180, east: 180)
        }
        let dLon = dLat / cos(widest * .pi / 180)
        return GeoBounds(south: south - dLat, north: north + dLat, west: west - dLon, east: east + dLon)
    }

    /// The box as one or two boxes within [-180, 180] (two when it crosses the antimeridian).
    var normalizedParts: [GeoBounds] {
        let split = normalizedSplit
        return split.second.map { [split.first, $0] } ?? [split.first]
    }

    /// ``normalizedParts`` without an array (the index splits every fence it inserts): the part
    /// up to +180°, and for a box across the antimeridian the part past it, shifted to start at
    /// -180°.
    var normalizedSplit: (first: GeoBounds, second: GeoBounds?) {
        if east - west >= 360 { return (GeoBounds(south: south, north: north, west: -180, east: 180), nil) }
        var west = west
        var east = east
        let shift = 360 * ((west + 180) / 360).rounded(.down)
        west -= shift
        east -= shift
        if east <= 180 { return (GeoBounds(south: south, north: north, west: west, east: east), nil) }
        return (
            GeoBounds(south: south, north: north, west: west, east: 180),
            GeoBounds(south: south, north: north, west: -180, east: east - 360)
        )
    }

    /// The centre latitude, where a fence's local frame is anchored.
    var centerLatitude: Double { (south + north) / 2 }
    /// The centre longitude (unwrapped).
    var centerLongitude: Double { (west + east) / 2 }
}
