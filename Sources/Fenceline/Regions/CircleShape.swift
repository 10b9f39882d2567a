import Foundation

/// A great-circle disc, measured by haversine distance.
struct CircleShape {
    let center: Coordinate
    let radius: Double
    private let sinLatitude: Double
    private let cosLatitude: Double

    init(center: Coordinate, radius: Double) {
        self.center = center
        self.radius = radius
        sinLatitude = sin(center.latitude * .pi / 180)
        cosLatitude = cos(center.latitude * .pi / 180)
    }

    /// The distance to the centre by an equirectangular projection at the two points' mean latitude
    /// (its cosine by a second-order expansion around the centre's), within 3 cm of the haversine
    /// distance up to 10 km away; `nil` farther out or near the poles, where only haversine will do.
    @inline(__always)
    func approximateDistance(to point: Coordinate) -> Double? {
        let dLat = (point.latitude - center.latitude) * (.pi / 180)
        let dLon = (unwrap(point.longitude, near: center.longitude) - center.longitude) * (.pi / 180)
        let half = dLat / 2
        let cosMean = cosLatitude * (1 - half * half / 2) - sinLatitude * half
        let x = dLon * cosMean
        let squared = (x * x + dLat * dLat) * (Earth.radius * Earth.radius)
        guard squared < 1e8, cosLatitude > 0.2 else { return nil }
        return squared.squareRoot()
    }

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

    /// The smallest haversine distance from the centre to the straight lon/lat segment from `a` to
    /// `b` (longitudes unwrapped the short way): the `planar` crossing path of SPEC §5.
    ///
    /// Along a lon/lat segment the distance is not a closed form; it is sampled finely enough that
    /// the nearest sample brackets the minimum (spacing under a quarter of the radius), then refined
    /// by golden-section search on the bracket.
    func nearestDistance(alongLonLatSegmentFrom a: Coordinate, to b: Coordinate) -> Double {
        let bLongitude = unwrap(b.longitude, near: a.longitude)
        func point(_ t: Double) -> Coordinate {
            Coordinate(
                latitude: a.latitude + (b.latitude - a.latitude) * t,
                longitude: a.longitude + (bLongitude - a.longitude) * t)
        }
        func distance(_ t: Double) -> Double { point(t).distance(to: center) }
        let length = a.distance(to: Coordinate(latitude: b.latitude, longitude: bLongitude))
        let samples = Int(min(4096, max(16, (4 * length / max(radius, 1)).rounded(.up))))
        var best = 0
        var bestDistance = distance(0)
        for index in 1...samples {
            let value = distance(Double(index) / Double(samples))
            if value < bestDistance {
                best = index
                bestDistance = value
            }
        }
        var low = Double(max(0, best - 1)) / Double(samples)
        var high = Double(min(samples, best + 1)) / Double(samples)
        let ratio = (5.0.squareRoot() - 1) / 2
        var x1 = high - ratio * (high - low)
        var x2 = low + ratio * (high - low)
        var f1 = distance(x1)
        var f2 = distance(x2)
        for _ in 0..<60 {
            if f1 < f2 {
                high = x2
                x2 = x1
                f2 = f1
                x1 = high - ratio * (high - low)
                f1 = distance(x1)
            } else {
                low = x1
                x1 = x2
                f1 = f2
                x2 = low + ratio * (high - low)
                f2 = distance(x2)
            }
        }
        return min(bestDistance, f1, f2)
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
