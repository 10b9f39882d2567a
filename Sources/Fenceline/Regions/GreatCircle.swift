import Foundation

/// Great-circle routines for crossing tests on the sphere.
enum GreatCircle {
    private static func vector(_ point: Coordinate) -> SIMD3<Double> {
        let lat = point.latitude * .pi / 180
        let lon = point.longitude * .pi / 180
        return SIMD3(cos(lat) * cos(lon), cos(lat) * sin(lon), sin(lat))
    }

    private static func cross(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    }

    private static func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }

    /// The shortest distance in metres from `point` to the great-circle arc from `a` to `b`.
    static func distance(from point: Coordinate, toArcFrom a: Coordinate, to b: Coordinate) -> Double {
        let va = vector(a)
        let vb = vector(b)
        let vp = vector(point)
        let normal = cross(va, vb)
        let normalLength = length(normal)
        let endpoints = min(point.distance(to: a), point.distance(to: b))
        guard normalLength > 1e-15 else { return endpoints }
        let n = normal / normalLength
        let offPlane = (vp * n).sum()
        let projected = vp - offPlane * n
        // The foot of the perpendicular lies on the arc when it is on the inner side of both ends.
        if (cross(va, projected) * n).sum() >= 0 && (cross(projected, vb) * n).sum() >= 0 {
            return min(endpoints, asin(min(1, abs(offPlane))) * Earth.radius)
        }
        return endpoints
    }

    /// Points along the great circle from `a` to `b`, no two more than `spacing` metres apart,
    /// with longitudes unwrapped so consecutive points differ by under half a turn.
    static func densified(from a: Coordinate, to b: Coordinate, spacing: Double) -> [Coordinate] {
        let total = a.distance(to: b)
        let pieces = Int(min(4096, max(1, (total / spacing).rounded(.up))))
        guard pieces > 1 else {
            return [a, Coordinate(latitude: b.latitude, longitude: unwrap(b.longitude, near: a.longitude))]
        }
        let va = vector(a)
        let vb = vector(b)
        let omega = acos(max(-1, min(1, (va * vb).sum())))
        let sinOmega = sin(omega)
        var points = [a]
        var previous = a.longitude
        for step in 1...pieces {
            let t = Double(step) / Double(pieces)
            let v: SIMD3<Double>
            if sinOmega < 1e-12 {
                v = va + (vb - va) * t
            } else {
                v = va * (sin((1 - t) * omega) / sinOmega) + vb * (sin(t * omega) / sinOmega)
            }
            let lat = atan2(v.z, (v.x * v.x + v.y * v.y).squareRoot()) * 180 / .pi
            let lon = unwrap(atan2(v.y, v.x) * 180 / .pi, near: previous)
            previous = lon
            points.append(Coordinate(latitude: lat, longitude: lon))
        }
        return points
    }
}
