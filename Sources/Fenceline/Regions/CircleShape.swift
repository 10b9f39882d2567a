import Foundation

/// A great-circle disc, measured by haversine distance.
struct CircleShape {
    let center: Coordinate
    let radius: Double

    /// Metres from `point` to the circle's edge; negative inside.
    @inline(__always)
    func signedDistance(to point: Coordinate) -> Double {
        point.distance(to: center) - radius
    }

    /// The box around the disc; full longitude when it reaches a pole.
    var bounds: GeoBounds {
        let angular = radius / Earth.radius
        let dLat = angular * 180 / .pi
        let latitudeRadians = center.latitude * .pi / 180
        let south = center.latitude - dLat
        let north = center.latitude + dLat
        let ratio = sin(angular) / cos(latitudeRadians)
        guard south > -90, north < 90, ratio < 1, angular < .pi / 2 else {
            return GeoBounds(south: max(-90, south), north: min(90, north), west: -180, east: 180)
        }
        let dLon = asin(ratio) * 180 / .pi * 1.000_001
        return GeoBounds(south: south, north: north, west: center.longitude - dLon, east: center.longitude + dLon)
    }

    /// The share of the accuracy disc around `point` that lies in the circle (a lens area).
    func overlapShare(point: Coordinate, accuracy: Double) -> Double {
        let distance = point.distance(to: center)
        guard accuracy > 0 else { return distance <= radius + boundaryTolerance ? 1 : 0 }
        let r1 = accuracy
        let r2 = radius
        if distance >= r1 + r2 { return 0 }
        if distance <= abs(r2 - r1) { return r1 <= r2 ? 1 : (r2 * r2) / (r1 * r1) }
        let a1 = r1 * r1 * acos(max(-1, min(1, (distance * distance + r1 * r1 - r2 * r2) / (2 * distance * r1))))
        let a2 = r2 * r2 * acos(max(-1, min(1, (distance * distance + r2 * r2 - r1 * r1) / (2 * distance * r2))))
        let k = (-distance + r1 + r2) * (distance + r1 - r2) * (distance - r1 + r2) * (distance + r1 + r2)
        let lens = a1 + a2 - 0.5 * max(0, k).squareRoot()
        return max(0, min(1, lens / (.pi * r1 * r1)))
    }
}
