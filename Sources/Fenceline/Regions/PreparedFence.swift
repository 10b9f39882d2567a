import Foundation
import GEOSBridge

/// How a `cross` path between two fixes is drawn (SPEC §5).
public enum CrossingPath: String, Hashable, Sendable, CaseIterable {
    /// The great circle between the fixes.
    case geodesic
    /// The straight segment in lon/lat, longitudes unwrapped the short way (Tile38 parity).
    case planar
}

/// A fence ready for the hot path: flat arrays in a local frame, plus GEOS geometry for the
/// accuracy-overlap mode, which needs true area intersections.
struct PreparedFence {
    /// A corridor is boxed (`indirect`): inline, its arrays and frame would make every fence's
    /// entry, circles' and polygons' too, as large as a corridor's.
    enum Shape {
        case circle(CircleShape)
        case polygon(PolygonShape)
        indirect case corridor(CorridorShape)
    }

    let shape: Shape

    /// The fence's box in unwrapped degrees (may extend past ±180°); the shape's own, not a copy
    /// (read when the fence is indexed).
    var bounds: GeoBounds {
        switch shape {
        case .circle(let circle): circle.bounds
        case .polygon(let polygon): polygon.bounds
        case .corridor(let corridor): corridor.bounds
        }
    }
    /// The fence in its local frame (metres), built only when the overlap mode needs it.
    private let overlapGeometry: GEOSGeometry?

    /// Whether measuring it calls GEOS (on the context it was prepared with).
    var usesGEOS: Bool { overlapGeometry != nil }

    /// Prepares `geometry`, already validated. Parts of a multipolygon that cross ±180° are joined
    /// with GEOS so a point near the seam measures its distance to the real coast, not the cut.
    init(_ geometry: RegionGeometry, context: GEOSContext, needsOverlap: Bool) throws {
        switch geometry {
        case .circle(let center, let radius):
            let circle = CircleShape(center: center, radius: radius)
            shape = .circle(circle)
            overlapGeometry = nil
        case .polygons(let raw):
            var parts = FenceUnwrapping.unwrappedParts(raw)
            if parts.count > 1 && parts != raw {
                let joined = try context.makeMultiPolygon(polygons: parts.map { $0.map(Self.planar) }).unaryUnion()
                parts = try joined.polygonRings().map { rings in
                    rings.map { ring in ring.map { Coordinate(latitude: $0.y, longitude: $0.x) } }
                }
            }
            let polygon = PolygonShape(unwrapped: parts)
            shape = .polygon(polygon)
            overlapGeometry =
                needsOverlap
                ? try context.makeMultiPolygon(
                    polygons: parts.map { rings in
                        rings.map { ring in
                            ring.map {
                                PlanarPoint(
                                    x: polygon.frame.x(longitude: $0.longitude),
                                    y: polygon.frame.y(latitude: $0.latitude))
                            }
                        }
                    })
                : nil
        case .corridor(let path, let width):
            let corridor = CorridorShape(unwrapped: FenceUnwrapping.unwrappedPath(path), width: width)
            shape = .corridor(corridor)
            overlapGeometry =
                needsOverlap
                ? try context.makeLineString(
                    corridor.path.map {
                        PlanarPoint(
                            x: corridor.frame.x(longitude: $0.longitude), y: corridor.frame.y(latitude: $0.latitude))
                    }
                ).buffer(width: width, quadrantSegments: 16)
                : nil
        }
    }

    /// `s(p)` of SPEC §5: metres from `point` to the boundary, negative inside, 0 on it.
    @inline(__always)
    func signedDistance(to point: Coordinate) -> Double {
        switch shape {
        case .circle(let circle):
            return snappedToBoundary(circle.signedDistance(to: point))
        case .polygon(let polygon): return polygon.signedDistance(to: point)
        case .corridor(let corridor): return corridor.signedDistance(to: point)
        }
    }

    /// The share of the accuracy disc around `point` inside the fence (SPEC §5, `overlap` mode):
    /// a lens for circles; for polygons and corridors the disc as a 64-gon intersected by GEOS.
    func overlapShare(point: Coordinate, accuracy: Double, signedDistance s: Double) -> Double {
        if case .circle(let circle) = shape { return circle.overlapShare(point: point, accuracy: accuracy) }
        guard accuracy > 0 else { return s <= 0 ? 1 : 0 }
        if s >= accuracy { return 0 }
        if s <= -accuracy { return 1 }
        guard let overlapGeometry else { return s <= 0 ? 1 : 0 }
        let frame: LocalFrame
        switch shape {
        case .polygon(let polygon): frame = polygon.frame
        case .corridor(let corridor): frame = corridor.frame
        case .circle: return 0
        }
        let cx = frame.x(longitude: unwrap(point.longitude, near: frame.originLongitude))
        let cy = frame.y(latitude: point.latitude)
        var ring: [PlanarPoint] = (0..<64).map { step in
            let angle = Double(step) * 2 * .pi / 64
            return PlanarPoint(x: cx + accuracy * cos(angle), y: cy + accuracy * sin(angle))
        }
        ring.append(ring[0])
        let discArea = 32 * accuracy * accuracy * sin(2 * .pi / 64)
        do {
            let disc = try overlapGeometry.context.makePolygon(rings: [ring])
            let shared = try overlapGeometry.intersection(disc).area()
            return max(0, min(1, shared / discArea))
        } catch {
            return s <= 0 ? 1 : 0
        }
    }

    /// Whether the path from `a` to `b` passes through the fence (no cushions).
    func isCrossed(from a: Coordinate, to b: Coordinate, path: CrossingPath) -> Bool {
        if case .circle(let circle) = shape {
            switch path {
            case .geodesic:
                return GreatCircle.distance(from: circle.center, toArcFrom: a, to: b) <= circle.radius
                    + boundaryTolerance
            case .planar:
                return circle.nearestDistance(alongLonLatSegmentFrom: a, to: b) <= circle.radius + boundaryTolerance
            }
        }
        let points: [Coordinate]
        switch path {
        case .geodesic: points = GreatCircle.densified(from: a, to: b, spacing: 1000)
        case .planar: points = [a, Coordinate(latitude: b.latitude, longitude: unwrap(b.longitude, near: a.longitude))]
        }
        for index in 1..<points.count where touches(from: points[index - 1], to: points[index]) { return true }
        return false
    }

    private func touches(from a: Coordinate, to b: Coordinate) -> Bool {
        switch shape {
        case .circle(let circle): return GreatCircle.distance(from: circle.center, toArcFrom: a, to: b) <= circle.radius
        case .polygon(let polygon): return polygon.touches(from: a, to: b)
        case .corridor(let corridor): return corridor.touches(from: a, to: b)
        }
    }

    private static func planar(_ ring: [Coordinate]) -> [PlanarPoint] {
        ring.map { PlanarPoint(x: $0.longitude, y: $0.latitude) }
    }
}
