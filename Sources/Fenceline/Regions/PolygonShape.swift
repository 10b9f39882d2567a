import Foundation

/// Polygons in a local frame in one allocation: per part, horizontal bands listing the edges that
/// cross them, then the vertices (ring after ring, each ring closed), then a multipolygon's parts
/// and the rings' ranges, so a fence costs one allocation beside its object; a simple polygon's
/// block starts with a header (its frame and its one part) the engine measures it through (see
/// ``Block``).
///
/// Containment is a crossing-number test over the edges of the point's band only, and distances
/// are measured only to edges in the bands within reach, so a test reads a few cache lines however
/// large the polygon. A class: it owns that allocation, freed in `deinit`.
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
        /// Band `b` of this part is band `firstBand + b` of `bands`.
        let firstBand: Int
        let bandCount: Int
        let bandHeight: Double

        @inline(__always)
        func band(_ y: Double) -> Int {
            min(bandCount - 1, max(0, Int((y - minY) / bandHeight)))
        }
    }

    let frame: LocalFrame
    /// Vertices of every ring in local metres, each ring closed (last = first).
    let points: UnsafeBufferPointer<SIMD2<Double>>
    /// One offset per band of every part and a final end, each into this same buffer, then the
    /// edges of each band, an edge named by the index of its first vertex in `points`.
    let bands: UnsafeBufferPointer<Int32>
    /// The parts: a simple polygon's one in its header, a multipolygon's after the points.
    let parts: UnsafeBufferPointer<Part>
    let bounds: GeoBounds
    /// Vertex index ranges of the rings, in the block after a multipolygon's parts (after the
    /// points for a simple polygon).
    let rings: UnsafeBufferPointer<Range<Int>>
    /// The one allocation `bands`, `points`, `parts` and `rings` live in, after a header (see
    /// ``Block``).
    private let storage: UnsafeMutableRawPointer
    /// The polygons in unwrapped lon/lat, kept for GEOS work (overlap, rendering).
    let polygons: [[[Coordinate]]]

    /// Prepares polygons whose parts already share one unwrapped longitude range.
    init(unwrapped polygons: [[[Coordinate]]]) {
        self.polygons = polygons
        // Plain loops and arrays sized up front: a catalog of a million small polygons prepares
        // each one, so what a polygon allocates is paid a million times.
        var pointCount = 0
        var ringCount = 0
        var bandTotal = 0
        var bounds = GeoBounds(south: .infinity, north: -.infinity, west: .infinity, east: -.infinity)
        for polygon in polygons {
            ringCount += polygon.count
            for ring in polygon {
                pointCount += ring.count
                for coordinate in ring { bounds.include(coordinate) }
            }
            bandTotal += Self.bandCount(of: polygon)
        }
        self.bounds = bounds
        frame = LocalFrame(originLatitude: bounds.centerLatitude, originLongitude: bounds.centerLongitude)
        var points: [SIMD2<Double>] = []
        points.reserveCapacity(pointCount)
        var rings: [Range<Int>] = []
        rings.reserveCapacity(ringCount)
        var parts: [Part] = []
        parts.reserveCapacity(polygons.count)
        // `bands`: one start offset per band and a final end, then the edge lists, offsets counted
        // from the start of `bands`. Built by counting (two passes) rather than an array per band.
        let headerCount = bandTotal + 1
        // Reserved before the header is written: reserving after would allocate it twice.
        var bands: [Int32] = []
        bands.reserveCapacity(headerCount + 2 * pointCount)
        bands.append(contentsOf: repeatElement(0, count: headerCount))
        var firstBand = 0
        for polygon in polygons {
            let firstRing = rings.count
            var low = SIMD2(Double.infinity, .infinity)
            var high = SIMD2(-Double.infinity, -.infinity)
            var partBounds = GeoBounds(south: .infinity, north: -.infinity, west: .infinity, east: -.infinity)
            for ring in polygon {
                let start = points.count
                for coordinate in ring {
                    let point = SIMD2(frame.x(longitude: coordinate.longitude), frame.y(latitude: coordinate.latitude))
                    points.append(point)
                    low = pointwiseMin(low, point)
                    high = pointwiseMax(high, point)
                    partBounds.include(coordinate)
                }
                rings.append(start..<points.count)
            }
            let bandCount = Self.bandCount(of: polygon)
            let bandHeight = high.y > low.y ? (high.y - low.y) / Double(bandCount) : 1
            func band(_ y: Double) -> Int { min(bandCount - 1, max(0, Int((y - low.y) / bandHeight))) }
            let base = bands.count
            // `counts[slot]` is where band `slot` starts (from `base`) after the prefix sums, then
            // where it ends once filled (the start of the next): one buffer for both passes.
            withUnsafeTemporaryAllocation(of: Int.self, capacity: bandCount + 1) { counts in
                counts.initialize(repeating: 0)
                for ring in rings[firstRing...] {
                    for index in ring.lowerBound..<(ring.upperBound - 1) {
                        let a = points[index].y, b = points[index + 1].y
                        for slot in band(min(a, b))...band(max(a, b)) { counts[slot + 1] += 1 }
                    }
                }
                for slot in 0..<bandCount { counts[slot + 1] += counts[slot] }
                bands.append(contentsOf: repeatElement(0, count: counts[bandCount]))
                for ring in rings[firstRing...] {
                    for index in ring.lowerBound..<(ring.upperBound - 1) {
                        let a = points[index].y, b = points[index + 1].y
                        for slot in band(min(a, b))...band(max(a, b)) {
                            bands[base + counts[slot]] = Int32(index)
                            counts[slot] += 1
                        }
                    }
                }
                bands[firstBand] = Int32(base)
                for slot in 0..<(bandCount - 1) { bands[firstBand + slot + 1] = Int32(base + counts[slot]) }
            }
            parts.append(
                Part(
                    centerLongitude: partBounds.centerLongitude, minX: low.x, minY: low.y, maxX: high.x, maxY: high.y,
                    rings: firstRing..<rings.count, firstBand: firstBand, bandCount: bandCount,
                    bandHeight: bandHeight))
            firstBand += bandCount
        }
        bands[bandTotal] = Int32(bands.count)
        // The block: a header (the frame and the first part), the bands, then the points from the
        // first 16-byte boundary after them.
        let bandsOffset = Block.headerSize
        let pointsOffset = (bandsOffset + bands.count * MemoryLayout<Int32>.stride + 15) & ~15
        // A simple polygon's one part is read from its header; a multipolygon's parts follow the
        // points.
        let simple = parts.count == 1
        let partsOffset = pointsOffset + points.count * MemoryLayout<SIMD2<Double>>.stride
        let ringsOffset = partsOffset + (simple ? 0 : parts.count) * MemoryLayout<Part>.stride
        storage = UnsafeMutableRawPointer.allocate(
            byteCount: ringsOffset + rings.count * MemoryLayout<Range<Int>>.stride, alignment: 64)
        if simple {
            storage.initializeMemory(
                as: Block.Header.self,
                repeating: Block.Header(
                    frame: frame, part: parts[0], pointsOffset: pointsOffset,
                    byteCount: pointsOffset + points.count * MemoryLayout<SIMD2<Double>>.stride),
                count: 1)
        }
        let storedBands = (storage + bandsOffset).bindMemory(to: Int32.self, capacity: bands.count)
        storedBands.initialize(from: bands, count: bands.count)
        let storedPoints = (storage + pointsOffset).bindMemory(to: SIMD2<Double>.self, capacity: points.count)
        storedPoints.initialize(from: points, count: points.count)
        let storedParts: UnsafePointer<Part>
        if simple {
            storedParts = UnsafePointer(
                (storage + MemoryLayout<Block.Header>.offset(of: \.part)!).assumingMemoryBound(to: Part.self))
        } else {
            let stored = (storage + partsOffset).bindMemory(to: Part.self, capacity: parts.count)
            stored.initialize(from: parts, count: parts.count)
            storedParts = UnsafePointer(stored)
        }
        let storedRings = (storage + ringsOffset).bindMemory(to: Range<Int>.self, capacity: rings.count)
        storedRings.initialize(from: rings, count: rings.count)
        self.bands = UnsafeBufferPointer(start: storedBands, count: bands.count)
        self.points = UnsafeBufferPointer(start: storedPoints, count: points.count)
        self.parts = UnsafeBufferPointer(start: storedParts, count: parts.count)
        self.rings = UnsafeBufferPointer(start: storedRings, count: rings.count)
    }

    /// About four edges per band: the crossing test then reads a handful of edges, not all.
    private static func bandCount(of polygon: [[Coordinate]]) -> Int {
        let edges = polygon.reduce(0) { $0 + max(0, $1.count - 1) }
        return max(1, min(edges / 4, 1 << 16))
    }

    /// A simple polygon's measurement data in one block, read through a pointer the engine keeps
    /// in its flat per-request slot: a measurement then makes one dependent load from the slot
    /// instead of four (the shape array, the shape, its bands and its points, each a likely cache
    /// miss; 1M tests over 5,000 polygons out of cache took 800 ns each that way, 540 ns through
    /// blocks). Valid while the shape lives.
    struct Block {
        struct Header {
            let frame: LocalFrame
            let part: Part
            let pointsOffset: Int
            /// The size in bytes of what a measurement reads: the header, the bands and the points.
            let byteCount: Int
        }

        static let headerSize = (MemoryLayout<Header>.stride + 15) & ~15

        let base: UnsafeRawPointer

        /// As ``PolygonShape/containment(of:measuringWithin:)``.
        @inline(__always)
        func containment(of point: Coordinate, measuringWithin limit: Double) -> (inside: Bool, distance: Double) {
            let header = base.assumingMemoryBound(to: Header.self)
            // The bands and points of a polygon of up to a hundred vertices or so, at once, while
            // the header is read (they were a miss after each other, out of cache); a larger
            // polygon is read only in the bands near the point.
            prefetch(base + 64, byteCount: min(header.pointee.byteCount, 2048) - 64)
            return PolygonShape.containment(
                of: point, frame: header.pointee.frame, part: header.pointee.part,
                bands: (base + Block.headerSize).assumingMemoryBound(to: Int32.self),
                points: (base + header.pointee.pointsOffset).assumingMemoryBound(to: SIMD2<Double>.self),
                measuringWithin: limit)
        }
    }

    /// A reach that takes in every edge; finite, so the band walk's bounds stay finite.
    static let everyEdge = 1e150

    /// The block of a simple polygon (one part), `nil` for a multipolygon.
    var block: Block? { parts.count == 1 ? Block(base: storage) : nil }

    deinit {
        storage.deallocate()
    }

    /// Metres from `point` to the nearest edge; negative inside, 0 on the boundary (for reported
    /// distances; the hot path measures only as far as a threshold needs). The bands find the
    /// nearest edge without a scan of every edge (a full scan cost about a microsecond per event).
    func signedDistance(to point: Coordinate) -> Double {
        let (inside, distance) = containment(of: point, measuringWithin: Self.everyEdge)
        return Fenceline.signedDistance(inside: inside, distance: distance)
    }

    /// Containment, and the distance to the nearest edge only when it is at most `limit` metres
    /// (`.infinity` otherwise): edges in bands farther than `limit` are not measured, which is all
    /// that threshold comparisons up to `limit` need.
    @inline(__always)
    func containment(of point: Coordinate, measuringWithin limit: Double) -> (inside: Bool, distance: Double) {
        var inside = false
        var distance = Double.infinity
        for part in parts {
            let result = containment(of: point, in: part, measuringWithin: limit)
            inside = inside || result.inside
            distance = min(distance, result.distance)
        }
        return (inside, distance)
    }

    /// Metres (in the local frame) from `point` to the nearest part's box; 0 inside one. A lower
    /// bound of the distance to the polygons, for a reading far from them.
    @inline(__always)
    func boxDistance(to point: Coordinate) -> Double {
        let y = frame.y(latitude: point.latitude)
        var best = Double.infinity
        for part in parts {
            let x = frame.x(longitude: unwrap(point.longitude, near: part.centerLongitude))
            let dx = max(0, part.minX - x, x - part.maxX)
            let dy = max(0, part.minY - y, y - part.maxY)
            best = min(best, (dx * dx + dy * dy).squareRoot())
        }
        return best
    }

    @inline(__always)
    private func containment(of point: Coordinate, in part: Part, measuringWithin limit: Double) -> (
        inside: Bool, distance: Double
    ) {
        Self.containment(
            of: point, frame: frame, part: part, bands: bands.baseAddress!, points: points.baseAddress!,
            measuringWithin: limit)
    }

    /// The measurement itself, on a part's geometry wherever it is read from.
    private static func containment(
        of point: Coordinate, frame: LocalFrame, part: Part, bands: UnsafePointer<Int32>,
        points: UnsafePointer<SIMD2<Double>>, measuringWithin limit: Double
    ) -> (inside: Bool, distance: Double) {
        let y = frame.y(latitude: point.latitude)
        let x = frame.x(longitude: unwrap(point.longitude, near: part.centerLongitude))
        if x < part.minX - limit || x > part.maxX + limit || y < part.minY - limit || y > part.maxY + limit {
            return (false, .infinity)
        }
        var inside = false
        var best = limit * limit
        var found = false
        // How far an edge's box may be and the edge still beat `best`: `limit`, then the best
        // distance so far (padded for rounding), so that later edges are passed over by their
        // boxes as the nearest one is closed in on.
        var reach = limit
        let isInBox = x >= part.minX && x <= part.maxX && y >= part.minY && y <= part.maxY
        // The distance to the edges of one band, those within `limit` of the point; with
        // `crossings`, also the crossing number along +x of the edges spanning y (all in y's band).
        @inline(__always)
        func measure(_ band: Int, crossings: Bool = false) {
            // While loops: a for-in over a Range showed unspecialised in profiles here.
            var slot = Int(bands[part.firstBand + band])
            let end = Int(bands[part.firstBand + band + 1])
            while slot < end {
                let index = Int(bands[slot])
                slot += 1
                let a = points[index], b = points[index + 1]
                if crossings, (a.y > y) != (b.y > y), x < a.x + (y - a.y) * (b.x - a.x) / (b.y - a.y) {
                    inside.toggle()
                }
                if x >= min(a.x, b.x) - reach && x <= max(a.x, b.x) + reach && y >= min(a.y, b.y) - reach
                    && y <= max(a.y, b.y) + reach
                {
                    let d = PlanarMath.distanceSquared(px: x, py: y, ax: a.x, ay: a.y, bx: b.x, by: b.y)
                    if d <= best {
                        best = d
                        found = true
                        reach = d.squareRoot() * (1 + 1e-9) + 1e-9
                    }
                }
            }
        }
        // The point's own band first (crossings only inside the box), measured in the same pass.
        let home = part.band(y)
        if isInBox { measure(home, crossings: true) } else { measure(home) }
        // Then the bands outwards, nearest first, while one may hold an edge closer than
        // the best so far (an edge of band b is at least the band's vertical gap away; the
        // gap is shortened by a micrometre for rounding in the band bounds).
        var below = home - 1
        var above = home + 1
        while true {
            let gapBelow =
                below >= 0 ? max(0, y - (part.minY + Double(below + 1) * part.bandHeight) - 1e-6) : .infinity
            let gapAbove =
                above < part.bandCount
                ? max(0, part.minY + Double(above) * part.bandHeight - y - 1e-6) : .infinity
            if gapBelow <= gapAbove {
                guard gapBelow * gapBelow <= best else { break }
                measure(below)
                below -= 1
            } else {
                guard gapAbove * gapAbove <= best else { break }
                measure(above)
                above += 1
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
                    let p = points[index - 1], q = points[index]
                    if PlanarMath.segmentsIntersect(ax, ay, bx, by, p.x, p.y, q.x, q.y) { return true }
                    if (p.y > ay) != (q.y > ay), ax < p.x + (ay - p.y) * (q.x - p.x) / (q.y - p.y) {
                        crossings.toggle()
                    }
                }
            }
            if crossings { return true }
        }
        return false
    }
}
