import Foundation

/// A WGS 84 position in degrees.
public struct Coordinate: Hashable, Sendable {
    /// Degrees north, in [-90, 90].
    public var latitude: Double
    /// Degrees east, in [-180, 180] for readings (never normalised); fences may unwrap beyond.
    public var longitude: Double

    /// Creates a coordinate from latitude and longitude in degrees.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether latitude is in [-90, 90] and longitude in [-180, 180] (NaN is not).
    public var isValid: Bool {
        (-90.0...90.0).contains(latitude) && (-180.0...180.0).contains(longitude)
    }
}

/// The sphere the engine measures on.
public enum Earth {
    /// Mean Earth radius in metres (IUGG R1), used for haversine distances and local frames.
    public static let radius = 6_371_008.8
    /// Metres along a meridian per degree of latitude on that sphere (computed, not stored: a
    /// stored global is read through a `swift_once` call, which showed in per-fix profiles).
    @inlinable public static var metresPerDegree: Double { radius * Double.pi / 180 }
}

extension Coordinate {
    /// The great-circle (haversine) distance to `other` in metres.
    public func distance(to other: Coordinate) -> Double {
        let toRadians = Double.pi / 180
        let lat1 = latitude * toRadians
        let lat2 = other.latitude * toRadians
        let sinHalfLat = sin((lat2 - lat1) / 2)
        let sinHalfLon = sin((other.longitude - longitude) * toRadians / 2)
        let h = sinHalfLat * sinHalfLat + cos(lat1) * cos(lat2) * sinHalfLon * sinHalfLon
        return 2 * Earth.radius * asin(min(1, h.squareRoot()))
    }
}

/// `longitude` shifted by a whole number of turns to lie within half a turn of `reference`.
@inline(__always)
func unwrap(_ longitude: Double, near reference: Double) -> Double {
    let delta = longitude - reference
    guard abs(delta) > 180 else { return longitude }
    return longitude - 360 * (delta / 360).rounded()
}
