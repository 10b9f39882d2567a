import Foundation

/// Polygons on flat vertex arrays in a local frame: crossing-number containment and distance to
/// the nearest edge in one pass over the edges. A class: the candidate loop reads it by reference
/// (a value would retain each of its arrays on every read).
final class PolygonShape {
    struct Part {
        /// Where a reading's longitude is unwrapped to before testing this part.
        let centerLongitude: Double
        let minX: Double
        let minY: Double
        let maxX: Double
        let maxY: Double
        /// Indices into `rings`.
        let rings: Range<Int>
    }

    let frame: LocalFrame
    let bounds: GeoBounds
    /// Vertices of every ring, each ring closed (last = first), in local metres.
    let xs: [Double]
    let ys: [Double]
    /// Vertex index ranges of the rings.
    let rings: [Range<Int>]
    let parts: [Part]
    /// The polygons in unwrapped lon/lat, kept for GEOS work (overlap, rendering).
    let polygons: [[[Coordinate]]]

    /// Prepares polygons whose parts already share one unwrapped longitude range.
    init(unwrapped polygons: [[[Coordinate]]]) {
        self.polygons = polygons
        bounds = GeoBounds(around: polygons.joined().joined())
        frame = LocalFrame(originLatitude: bounds.centerLatitude, originLongitude: bounds.centerLongitude)
        var xs: [Double] = []
        var ys: [Double] = []
        var rings: [Range<Int>] = []
        var parts: [Part] = []
        for polygon in polygons {
            let firstRing = rings.count
            var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
            for ring in polygon {
                let start = xs.count
                for point in ring {
                    let x = frame.x(longitude: point.longitude)
                    let y = frame.y(latitude: point.latitude)
                    xs.append(x)
                    ys.append(y)
                    minX = min(minX, x)
                    maxX = max(maxX, x)
                    minY = min(minY, y)
                    maxY = max(maxY, y)
                }
                rings.append(start..<xs.count)
            }
            let partBounds = GeoBounds(around: polygon.joined())
            parts.append(
                Part(
                    centerLongitude: partBounds.centerLongitude, minX: minX, minY: minY, maxX: maxX, maxY: maxY,
                    rings: firstRing..<rings.count))
        }
        self.xs = xs
        self.ys = ys
        self.rings = rings
        self.parts = parts
    }

    /// Metres from `point` to the nearest edge; negative inside, 0 on the boundary.
    func signedDistance(to point: Coordinate) -> Double {
        let y = frame.y(latitude: point.latitude)
        var inside = false
        var best = Double.infinity
        xs.withUnsafeBufferPointer { xs in
            ys.withUnsafeBufferPointer { ys in
                for part in parts {
                    let x = frame.x(longitude: unwrap(point.longitude, near: part.centerLongitude))
                    let dx = max(part.minX - x, 0, x - part.maxX)
                    let dy = max(part.minY - y, 0, y - part.maxY)
                    if dx * dx + dy * dy > best { continue }
                    var crossings = false
                    for ring in rings[part.rings] {
                        var ax = xs[ring.lowerBound]
                        var ay = ys[ring.lowerBound]
                        for index in (ring.lowerBound + 1)..<ring.upperBound {
                            let bx = xs[index]
                            let by = ys[index]
                            if (ay > y) != (by > y), x < ax + (y - ay) * (bx - ax) / (by - ay) {
                                crossings.toggle()
                            }
                            let d = PlanarMath.distanceSquared(px: x, py: y, ax: ax, ay: ay, bx: bx, by: by)
                            if d < best { best = d }
                            ax = bx
                            ay = by
                        }
                    }
                    if crossings { inside = true }
                }
            }
        }
        let distance = best.squareRoot()
        if distance <= boundaryTolerance { return 0 }
        return inside ? -distance : distance
    }

    /// Containment, and the distance to the nearest edge only when it is at most `limit` metres
    /// (`.infinity` otherwise): edges whose boxes lie farther than `limit` are not measured, which
    /// is all that threshold comparisons up to `limit` need.
    func containment(of point: Coordinate, measuringWithin limit: Double) -> (inside: Bool, distance: Double) {
        let y = frame.y(latitude: point.latitude)
        var inside = false
        var best = limit * limit
        var found = false
        xs.withUnsafeBufferPointer { xs in
            ys.withUnsafeBufferPointer { ys in
                for part in parts {
                    let x = frame.x(longitude: unwrap(point.longitude, near: part.centerLongitude))
                    if x < part.minX - limit || x > part.maxX + limit || y < part.minY - limit || y > part.maxY + limit
                    {
                        continue
                    }
                    let nearBox = x >= part.minX && x <= part.maxX && y >= part.minY && y <= part.maxY
                    var crossings = false
                    for ring in rings[part.rings] {
                        var ax = xs[ring.lowerBound]
                        var ay = ys[ring.lowerBound]
                        for index in (ring.lowerBound + 1)..<ring.upperBound {
                            let bx = xs[index]
                            let by = ys[index]
                            if nearBox, (ay > y) != (by > y), x < ax + (y - ay) * (bx - ax) / (by - ay) {
                                crossings.toggle()
                            }
                            if x >= min(ax, bx) - limit && x <= max(ax, bx) + limit && y >= min(ay, by) - limit
                                && y <= max(ay, by) + limit
                            {
                                let d = PlanarMath.distanceSquared(px: x, py: y, ax: ax, ay: ay, bx: bx, by: by)
                                if d <= best {
                                    best = d
                                    found = true
                                }
                            }
                            ax = bx
                            ay = by
                        }
                    }
                    if crossings { inside = true }
                }
            }
        }
        return (inside, found ? best.squareRoot() : .infinity)
    }

    /// Whether the straight lon/lat segment from `a` to `b` touches the polygons (boundary included).
    func touches(from a: Coordinate, to b: Coordinate) -> Bool {
        for part in parts {
            let aLongitude = unwrap(a.longitude, near: part.centerLongitude)
            let bLongitude = unwrap(b.longitude, near: aLongitude)
            let ax = frame.x(longitude: aLongitude), ay = frame.y(latitude: a.latitude)
            let bx = frame.x(longitude: bLongitude), by = frame.y(latitude: b.latitude)
            if max(ax, bx) < part.minX || min(ax, bx) > part.maxX || max(ay, by) < part.minY || min(ay, by) > part.maxY
            {
                continue
            }
            var crossings = false
            for ring in rings[part.rings] {
                for index in (ring.lowerBound + 1)..<ring.upperBound {
                    let px = xs[index - 1], py = ys[index - 1], qx = xs[index], qy = ys[index]
                    if PlanarMath.segmentsIntersect(ax, ay, bx, by, px, py, qx, qy) { return true }
                    if (py > ay) != (qy > ay), ax < px + (ay - py) * (qx - px) / (qy - py) { crossings.toggle() }
                }
            }
            if crossings { return true }
        }
        return false
    }
}
