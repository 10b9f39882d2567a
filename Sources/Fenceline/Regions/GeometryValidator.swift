import GEOSBridge

/// Checks fences before the engine accepts them: ranges, ring closure and GEOS validity.
///
/// Owns one GEOS context, so it belongs to one isolation domain like the engine.
public final class GeometryValidator {
    let context: GEOSContext

    /// Creates a validator with its own GEOS context.
    public init() {
        context = GEOSContext()
    }

    /// Creates a validator sharing an engine's context.
    init(context: GEOSContext) {
        self.context = context
    }

    /// Half the Earth's circumference (the haversine radius × π): a fence reaching further covers
    /// the whole Earth, and distances past it are not defined.
    static let largestReach = 20_015_086.0

    static func reachMessage(_ name: String, _ value: Double) -> String {
        "\(name) must be at most 20015086 m, half the Earth's circumference (got \(value))"
    }

    /// What is wrong with a circle's radius, if anything (also for a catalog whose circle has no
    /// readable centre).
    public static func radiusProblem(_ radius: Double) -> String? {
        if !(radius > 0) || !radius.isFinite { return "radius must be a number of metres > 0 (got \(radius))" }
        return radius > largestReach ? reachMessage("radius", radius) : nil
    }

    /// Every problem in `geometry`, or an empty array when the engine can use it.
    public func problems(in geometry: RegionGeometry) -> [GeometryProblem] {
        switch geometry {
        case .circle(let center, let radius):
            var problems: [GeometryProblem] = []
            if !center.isValid { problems.append(coordinateProblem(center, path: "center")) }
            if let problem = Self.radiusProblem(radius) {
                problems.append(GeometryProblem(path: "radius", message: problem))
            }
            return problems
        case .corridor(let path, let width):
            var problems: [GeometryProblem] = []
            if path.count < 2 {
                problems.append(
                    GeometryProblem(
                        path: "coordinates", message: "a LineString needs at least 2 positions (got \(path.count))"))
            }
            for (index, point) in path.enumerated() where !point.isValid {
                problems.append(coordinateProblem(point, path: "coordinates[\(index)]"))
            }
            if !(width > 0) || !width.isFinite {
                problems.append(
                    GeometryProblem(path: "corridor", message: "corridor must be a number of metres > 0 (got \(width))")
                )
            } else if width > Self.largestReach {
                problems.append(GeometryProblem(path: "corridor", message: Self.reachMessage("corridor", width)))
            }
            return problems
        case .polygons(let polygons):
            return polygonProblems(polygons)
        }
    }

    private func polygonProblems(_ polygons: [[[Coordinate]]]) -> [GeometryProblem] {
        let single = polygons.count == 1
        func prefix(_ polygon: Int) -> String { single ? "coordinates" : "coordinates[\(polygon)]" }
        var problems: [GeometryProblem] = []
        if polygons.isEmpty {
            return [GeometryProblem(path: "coordinates", message: "a MultiPolygon needs at least one polygon")]
        }
        for (polygonIndex, rings) in polygons.enumerated() {
            if rings.isEmpty {
                problems.append(
                    GeometryProblem(path: prefix(polygonIndex), message: "a polygon needs an exterior ring"))
            }
            for (ringIndex, ring) in rings.enumerated() {
                // Made only for a message: a million fences' rings are read with none.
                var path: String { "\(prefix(polygonIndex))[\(ringIndex)]" }
                for (index, point) in ring.enumerated() where !point.isValid {
                    problems.append(coordinateProblem(point, path: "\(path)[\(index)]"))
                }
                if ring.count < 4 {
                    problems.append(
                        GeometryProblem(
                            path: path,
                            message:
                                "a ring needs at least 4 positions, the last equal to the first (got \(ring.count))"))
                } else if ring.first != ring.last {
                    problems.append(
                        GeometryProblem(
                            path: path, message: "ring is not closed: its last position must equal its first"))
                }
            }
        }
        guard problems.isEmpty else { return problems }
        // The common fence, one shell that needs no unwrapping, is usually proven valid without GEOS.
        if polygons.count == 1, polygons[0].count == 1, RingCertificate.certifiesSimple(planar(polygons[0][0])),
            FenceUnwrapping.unwrappedParts(polygons)[0] == polygons[0]
        {
            return []
        }
        // Each part's rings unwrapped from the part's own first position (SPEC §5): a single ring
        // that crosses ±180° becomes contiguous, and parts split along the seam stay apart, so
        // overlapping parts and self-intersections are found either way.
        let parts = FenceUnwrapping.unwrappedParts(polygons, sharingOneRange: false)
        let across = parts != polygons ? " across ±180°" : ""
        do {
            let geometry = try context.makeMultiPolygon(polygons: parts.map { $0.map(planar) })
            if let reason = try geometry.invalidityReason() {
                return [GeometryProblem(path: "coordinates", message: "polygon is not valid\(across): \(reason)")]
            }
        } catch {
            return [GeometryProblem(path: "coordinates", message: "polygon is not valid\(across): \(error)")]
        }
        return []
    }

    private func coordinateProblem(_ point: Coordinate, path: String) -> GeometryProblem {
        GeometryProblem(
            path: path,
            message:
                "position out of range: lat must be in [-90, 90] and lon in [-180, 180] (got lat \(point.latitude), lon \(point.longitude))"
        )
    }

    private func planar(_ ring: [Coordinate]) -> [PlanarPoint] {
        ring.map { PlanarPoint(x: $0.longitude, y: $0.latitude) }
    }
}

@available(*, unavailable)
extension GeometryValidator: Sendable {}
