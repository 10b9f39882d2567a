import GEOSBridge

/// A proof, in exact arithmetic, that a polygon without holes is valid in GEOS's sense, so the
/// common fence skips GEOS's validity check.
///
/// GEOS stays the judge of everything else: this only answers "certainly valid" or "don't know".
/// It exists because `GEOSisValid` builds a topology graph per polygon (about 15 µs for a
/// 36-vertex fence) and a 100k-fence catalog spent most of its load time there; no listed library
/// offers a cheaper exact check. A ring is certified when no two non-adjacent edges touch and no
/// two adjacent edges fold back on each other, every orientation decided with Shewchuk's
/// error-bounded determinant (a sign the bound cannot guarantee means "don't know").
enum RingCertificate {
    /// Rings longer than this go to GEOS: the pairwise test is quadratic.
    static let maximumVertices = 256

    /// Whether `ring` (closed, at least 4 positions, planar x = lon, y = lat) is certainly a
    /// valid polygon shell. `false` means GEOS must decide.
    static func certifiesSimple(_ ring: [PlanarPoint]) -> Bool {
        let edges = ring.count - 1
        guard edges >= 3, edges <= maximumVertices, ring.first == ring.last else { return false }
        return ring.withUnsafeBufferPointer { p in
            // Adjacent edges (including last–first) meet only at their shared vertex: the turn
            // there is certainly not straight (a zero turn could fold the ring back on itself).
            for index in 0..<edges {
                let a = p[(index + edges - 1) % edges]
                let b = p[index]
                let c = p[index + 1]
                if a == b || b == c || orientation(a, b, c) == 0 { return false }
            }
            // Non-adjacent edges share no point.
            for i in 0..<edges {
                let a1 = p[i]
                let a2 = p[i + 1]
                let minX = min(a1.x, a2.x)
                let maxX = max(a1.x, a2.x)
                let minY = min(a1.y, a2.y)
                let maxY = max(a1.y, a2.y)
                // Edge i is adjacent to i+1 and (for i == 0) to the last edge.
                let last = i == 0 ? edges - 1 : edges
                var j = i + 2
                while j < last {
                    let b1 = p[j]
                    let b2 = p[j + 1]
                    j += 1
                    if max(b1.x, b2.x) < minX || min(b1.x, b2.x) > maxX || max(b1.y, b2.y) < minY
                        || min(b1.y, b2.y) > maxY
                    {
                        continue  // disjoint boxes: exact comparisons, certainly apart
                    }
                    let o1 = orientation(a1, a2, b1)
                    let o2 = orientation(a1, a2, b2)
                    if o1 != 0 && o1 == o2 { continue }  // b entirely on one side of a's line
                    let o3 = orientation(b1, b2, a1)
                    let o4 = orientation(b1, b2, a2)
                    if o3 != 0 && o3 == o4 { continue }
                    return false  // they touch or cross, or a sign is uncertain
                }
            }
            return true
        }
    }

    /// The sign of the turn a → b → c: 1 left, -1 right, 0 when straight or when rounding could
    /// have changed the sign (Shewchuk's `orient2d` filter, bound (3 + 16ε)ε). The bound assumes
    /// no underflow, so products too small for it are "don't know" too.
    @inline(__always)
    static func orientation(_ a: PlanarPoint, _ b: PlanarPoint, _ c: PlanarPoint) -> Int {
        let left = (a.x - c.x) * (b.y - c.y)
        let right = (a.y - c.y) * (b.x - c.x)
        let determinant = left - right
        let magnitude = abs(left) + abs(right)
        guard magnitude > 1e-250 else { return 0 }
        let bound = 3.3306690738754716e-16 * magnitude
        if determinant > bound { return 1 }
        if determinant < -bound { return -1 }
        return 0
    }
}
