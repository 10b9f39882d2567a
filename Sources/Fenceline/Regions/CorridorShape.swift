import Foundation

/// A route corridor: the points within `width` metres of a polyline, measured in a local frame.
struct CorridorShape {
    let frame: LocalFrame
    let bounds: GeoBounds
    let width: Double
    let xs: [Double]
    let ys: [Double]
    /// The path in unwrapped lon/lat, kept for GEOS work (overlap, rendering).
    let path: [Coordinate]

    init(unwrapped path: [Coordinate], width: Double) {
        self.path = path
        self.width = width
        let line = GeoBounds(around: path)
        let frame = LocalFrame(originLatitude: line.centerLatitude, originLongitude: line.centerLongitude)
        self.frame = frame
        bounds = line.expanded(byMetres: width * 1.000_001 + 0.01)
        xs = path.map { frame.x(longitude: $0.longitude) }
        ys = path.map { frame.y(latitude: $0.latitude) }
    }

    private func local(_ point: Coordinate) -> (x: Double, y: Double) {
        (frame.x(longitude: unwrap(point.longitude, near: frame.originLongitude)), frame.y(latitude: point.latitude))
    }

    /// Metres from `point` to the corridor's edge; negative inside.
    func signedDistance(to point: Coordinate) -> Double {
        let (x, y) = local(point)
        var best = Double.infinity
        for index in 1..<xs.count {
            let d = PlanarMath.distanceSquared(
                px: x, py: y, ax: xs[index - 1], ay: ys[index - 1], bx: xs[index], by: ys[index])
            if d < best { best = d }
        }
        return snappedToBoundary(best.squareRoot() - width)
    }

    /// Whether the straight lon/lat segment from `a` to `b` comes within the corridor.
    func touches(from a: Coordinate, to b: Coordinate) -> Bool {
        let (ax, ay) = local(a)
        let bx = frame.x(longitude: unwrap(b.longitude, near: frame.longitude(x: ax)))
        let by = frame.y(latitude: b.latitude)
        let limit = (width + boundaryTolerance) * (width + boundaryTolerance)
        for index in 1..<xs.count {
            let d = PlanarMath.segmentDistanceSquared(
                ax, ay, bx, by, xs[index - 1], ys[index - 1], xs[index], ys[index])
            if d <= limit { return true }
        }
        return false
    }
}
