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
    /// Rings longer than this go to GEOS: the test is quadratic at worst.
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
            // Non-adjacent edges share no point. Sort and sweep: the edges in order of their
            // least x, each compared only with those after it that begin (in x) before it ends,
            // and then only when their y ranges meet. Comparing every pair was most of the
            // validation of a catalog of 64-vertex fences.
            return withUnsafeTemporaryAllocation(of: EdgeBox.self, capacity: edges) { boxes in
                for index in 0..<edges {
                    let a = p[index]
                    let b = p[index + 1]
                    boxes.initializeElement(
                        at: index,
                        to: EdgeBox(
                            minX: min(a.x, b.x), maxX: max(a.x, b.x), minY: min(a.y, b.y), maxY: max(a.y, b.y),
                            index: index))
                }
                // Insertion sort: rings are short, and the standard library's stable sort cost
                // as much as the sweep here.
                for position in 1..<edges {
                    let box = boxes[position]
                    var hole = position
                    while hole > 0 && boxes[hole - 1].minX > box.minX {
                        boxes[hole] = boxes[hole - 1]
                        hole -= 1
                    }
                    boxes[hole] = box
                }
                for position in 0..<edges {
                    let box = boxes[position]
                    let a1 = p[box.index]
                    let a2 = p[box.index + 1]
                    var next = position + 1
                    // Boxes that only touch are compared too (exact comparisons either way).
                    while next < edges && boxes[next].minX <= box.maxX {
                        let other = boxes[next]
                        next += 1
                        if other.maxY < box.minY || other.minY > box.maxY { continue }
                        let gap = abs(other.index - box.index)
                        if gap == 1 || gap == edges - 1 { continue }  // adjacent: checked above
                        let b1 = p[other.index]
                        let b2 = p[other.index + 1]
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
    }

    /// An edge's bounding box, and the index of its first vertex.
    private struct EdgeBox {
        var minX, maxX, minY, maxY: Double
        var index: Int
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
