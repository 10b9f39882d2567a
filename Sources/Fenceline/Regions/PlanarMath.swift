/// Small planar routines on local-frame metres, shared by the fence shapes.
enum PlanarMath {
    /// Squared distance from (px, py) to the segment (ax, ay)–(bx, by).
    @inline(__always)
    static func distanceSquared(px: Double, py: Double, ax: Double, ay: Double, bx: Double, by: Double) -> Double {
        let dx = bx - ax
        let dy = by - ay
        let lengthSquared = dx * dx + dy * dy
        var t = 0.0
        if lengthSquared > 0 {
            t = ((px - ax) * dx + (py - ay) * dy) / lengthSquared
            t = t < 0 ? 0 : (t > 1 ? 1 : t)
        }
        let ex = ax + t * dx - px
        let ey = ay + t * dy - py
        return ex * ex + ey * ey
    }

    /// Squared distance between two segments (0 when they touch or cross).
    static func segmentDistanceSquared(
        _ a1x: Double, _ a1y: Double, _ a2x: Double, _ a2y: Double,
        _ b1x: Double, _ b1y: Double, _ b2x: Double, _ b2y: Double
    ) -> Double {
        if segmentsIntersect(a1x, a1y, a2x, a2y, b1x, b1y, b2x, b2y) { return 0 }
        return min(
            min(
                distanceSquared(px: a1x, py: a1y, ax: b1x, ay: b1y, bx: b2x, by: b2y),
                distanceSquared(px: a2x, py: a2y, ax: b1x, ay: b1y, bx: b2x, by: b2y)),
            min(
                distanceSquared(px: b1x, py: b1y, ax: a1x, ay: a1y, bx: a2x, by: a2y),
                distanceSquared(px: b2x, py: b2y, ax: a1x, ay: a1y, bx: a2x, by: a2y)))
    }

    /// Whether two closed segments share a point.
    static func segmentsIntersect(
        _ a1x: Double, _ a1y: Double, _ a2x: Double, _ a2y: Double,
        _ b1x: Double, _ b1y: Double, _ b2x: Double, _ b2y: Double
    ) -> Bool {
        let d1 = cross(b1x, b1y, b2x, b2y, a1x, a1y)
        let d2 = cross(b1x, b1y, b2x, b2y, a2x, a2y)
        let d3 = cross(a1x, a1y, a2x, a2y, b1x, b1y)
        let d4 = cross(a1x, a1y, a2x, a2y, b2x, b2y)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) { return true }
        if d1 == 0 && onSegment(b1x, b1y, b2x, b2y, a1x, a1y) { return true }
        if d2 == 0 && onSegment(b1x, b1y, b2x, b2y, a2x, a2y) { return true }
        if d3 == 0 && onSegment(a1x, a1y, a2x, a2y, b1x, b1y) { return true }
        if d4 == 0 && onSegment(a1x, a1y, a2x, a2y, b2x, b2y) { return true }
        return false
    }

    @inline(__always)
    private static func cross(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, _ px: Double, _ py: Double)
        -> Double
    {
        (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    }

    @inline(__always)
    private static func onSegment(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, _ px: Double, _ py: Double)
        -> Bool
    {
        min(ax, bx) <= px && px <= max(ax, bx) && min(ay, by) <= py && py <= max(ay, by)
    }
}

/// Distances below this many metres count as on the boundary: it absorbs floating-point noise in
/// positions meant to lie exactly on an edge or at a cushion, and is far below any GPS precision.
let boundaryTolerance = 1e-6

/// A signed distance `s`, 0 when it lies within ``boundaryTolerance`` of the boundary.
@inline(__always)
func snappedToBoundary(_ s: Double) -> Double {
    abs(s) <= boundaryTolerance ? 0 : s
}

/// The signed distance of a point `distance` metres from a boundary, negative `inside`, 0 on it
/// (within ``boundaryTolerance``).
@inline(__always)
func signedDistance(inside: Bool, distance: Double) -> Double {
    distance <= boundaryTolerance ? 0 : (inside ? -distance : distance)
}
