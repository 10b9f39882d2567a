import Foundation
import GEOSBridge
import TestSupport
import Testing

@testable import Fenceline

/// The engine's own containment and distance on flat arrays, checked against GEOS.
@Suite struct FenceGeometryTests {
    /// A star-shaped polygon (concave) with a hole, around Amsterdam.
    static func star(vertices: Int = 24) -> [[Coordinate]] {
        var generator = SplitMix(state: 7)
        var outer: [Coordinate] = (0..<vertices).map { index in
            let angle = Double(index) / Double(vertices) * 2 * .pi
            let radius = index.isMultiple(of: 2) ? 0.01 : Double.random(in: 0.003...0.006, using: &generator)
            return Coordinate(latitude: 52.37 + radius * sin(angle), longitude: 4.89 + radius * cos(angle) * 1.6)
        }
        outer.append(outer[0])
        let hole = [(-1.0, -1.0), (-1, 1), (1, 1), (1, -1), (-1, -1)].map {
            Coordinate(latitude: 52.37 + $0.1 * 0.001, longitude: 4.89 + $0.0 * 0.0016)
        }
        return [outer, hole]
    }

    @Test func containmentAgreesWithGEOSOnOneHundredThousandRandomPoints() throws {
        let context = GEOSContext()
        let rings = Self.star()
        let fence = try PreparedFence(.polygons([rings]), context: context, needsOverlap: false)
        let reference = try context.makePolygon(
            rings: rings.map { $0.map { PlanarPoint(x: $0.longitude, y: $0.latitude) } }
        ).makePrepared()
        var generator = SplitMix(state: 42)
        var inside = 0
        var compared = 0
        for _ in 0..<100_000 {
            let point = Coordinate(
                latitude: Double.random(in: 52.355...52.385, using: &generator),
                longitude: Double.random(in: 4.865...4.915, using: &generator))
            let s = fence.signedDistance(to: point)
            guard abs(s) > 0.001 else { continue }  // away from the boundary
            compared += 1
            let expected = try reference.covers(x: point.longitude, y: point.latitude)
            if expected { inside += 1 }
            #expect((s <= 0) == expected, "disagree at \(point): s = \(s)")
        }
        #expect(compared > 99_000)
        #expect(inside > 10_000 && inside < 90_000)
    }

    @Test func distanceToTheBoundaryAgreesWithGEOSInTheLocalFrame() throws {
        let context = GEOSContext()
        let rings = Self.star()
        let fence = try PreparedFence(.polygons([rings]), context: context, needsOverlap: false)
        guard case .polygon(let polygon) = fence.shape else { Issue.record("not a polygon"); return }
        let frame = polygon.frame
        var generator = SplitMix(state: 9)
        for _ in 0..<2_000 {
            let point = Coordinate(
                latitude: Double.random(in: 52.355...52.385, using: &generator),
                longitude: Double.random(in: 4.865...4.915, using: &generator))
            let x = frame.x(longitude: point.longitude), y = frame.y(latitude: point.latitude)
            let geosPoint = try context.makePoint(x: x, y: y)
            var nearest = Double.infinity
            for ring in rings {
                let line = try context.makeLineString(
                    ring.map { PlanarPoint(x: frame.x(longitude: $0.longitude), y: frame.y(latitude: $0.latitude)) })
                nearest = min(nearest, try line.distance(to: geosPoint))
            }
            #expect(abs(abs(fence.signedDistance(to: point)) - nearest) < 1e-6)
        }
    }

    @Test func circleDistanceIsHaversine() throws {
        let context = GEOSContext()
        let fence = try PreparedFence(
            .circle(center: Fixtures.center, radius: 100), context: context, needsOverlap: false)
        // One degree of latitude on the sphere of R = 6,371,008.8 m.
        let north = Coordinate(latitude: 53.37, longitude: 4.89)
        #expect(abs(fence.signedDistance(to: north) - (Earth.metresPerDegree - 100)) < 1e-6)
        #expect(fence.signedDistance(to: Fixtures.center) == -100)
    }

    @Test func polygonAcrossTheAntimeridianIsUnwrapped() throws {
        let context = GEOSContext()
        let ring = [(179.0, -1.0), (-179.0, -1.0), (-179.0, 1.0), (179.0, 1.0), (179.0, -1.0)].map {
            Coordinate(latitude: $0.1, longitude: $0.0)
        }
        #expect(GeometryValidator().problems(in: .polygons([[ring]])).isEmpty)
        let fence = try PreparedFence(.polygons([[ring]]), context: context, needsOverlap: false)
        #expect(fence.signedDistance(to: Coordinate(latitude: 0, longitude: 180)) < 0)
        #expect(fence.signedDistance(to: Coordinate(latitude: 0, longitude: -179.5)) < 0)
        #expect(fence.signedDistance(to: Coordinate(latitude: 0, longitude: 179.5)) < 0)
        #expect(fence.signedDistance(to: Coordinate(latitude: 0, longitude: 0)) > 0)
        #expect(fence.signedDistance(to: Coordinate(latitude: 0, longitude: 178.5)) > 0)
    }

    /// A ring joined from parts split at the antimeridian: vertices at exactly 180 and −180 among
    /// others. As given in lon/lat it crosses itself; unwrapped relative to the ring it is simple.
    @Test func joinedRingWithVerticesAtBothSeamsIsValidAndEvaluated() throws {
        let ring = [
            (179.5, -17.2), (179.1, -17.4), (178.9, -17.0), (179.3, -16.8), (180.0, -16.6), (-179.8, -16.7),
            (-179.9, -17.0), (-180.0, -17.1), (179.5, -17.2),
        ].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        #expect(GeometryValidator().problems(in: .polygons([[ring]])).isEmpty)
        let fence = try PreparedFence(.polygons([[ring]]), context: GEOSContext(), needsOverlap: false)
        // Inside on both sides of the line and on it; outside beyond either end.
        for (longitude, latitude) in [(179.2, -17.0), (180.0, -16.9), (-180.0, -16.9), (-179.9, -16.8)] {
            let s = fence.signedDistance(to: Coordinate(latitude: latitude, longitude: longitude))
            #expect(s < 0, "at \(longitude), \(latitude): \(s)")
        }
        for (longitude, latitude) in [(178.7, -17.0), (-179.7, -16.8), (179.5, -16.5), (0.0, -17.0)] {
            let s = fence.signedDistance(to: Coordinate(latitude: latitude, longitude: longitude))
            #expect(s > 0, "at \(longitude), \(latitude): \(s)")
        }
        // The box spans the line: 178.9 to 180.2 unwrapped.
        #expect(abs(fence.bounds.west - 178.9) < 1e-9 && abs(fence.bounds.east - 180.2) < 1e-9)
    }

    /// Unwrapping does not excuse a ring that crosses itself once unwrapped.
    @Test func crossingRingThatIntersectsItselfUnwrappedIsRefused() {
        let bowTie = [(179.5, -17.0), (-179.5, -16.0), (-179.5, -17.0), (179.5, -16.0), (179.5, -17.0)].map {
            Coordinate(latitude: $0.1, longitude: $0.0)
        }
        let problems = GeometryValidator().problems(in: .polygons([[bowTie]]))
        #expect(problems.count == 1)
        #expect(problems.first?.message.hasPrefix("polygon is not valid across ±180°: Self-intersection") == true)
    }

    @Test func multiPolygonSplitAtTheAntimeridianWorksLikeNaturalEarth() throws {
        // Natural Earth cuts Fiji along ±180°: one part ends at 180, the other starts at −180.
        let east = [(178.0, -17.0), (180.0, -17.0), (180.0, -16.0), (178.0, -16.0), (178.0, -17.0)]
        let west = [(-180.0, -17.0), (-179.0, -17.0), (-179.0, -16.0), (-180.0, -16.0), (-180.0, -17.0)]
        let polygons = [east, west].map { [$0.map { Coordinate(latitude: $0.1, longitude: $0.0) }] }
        #expect(GeometryValidator().problems(in: .polygons(polygons)).isEmpty)
        let fence = try PreparedFence(.polygons(polygons), context: GEOSContext(), needsOverlap: false)
        for longitude in [180.0, -180.0, 179.99, -179.99] {
            let s = fence.signedDistance(to: Coordinate(latitude: -16.5, longitude: longitude))
            // Joined across the seam: deep inside, about 55 km from the north and south coasts.
            #expect(s < -50_000, "at lon \(longitude): \(s)")
        }
        #expect(fence.signedDistance(to: Coordinate(latitude: -16.5, longitude: 177)) > 0)
    }

    @Test func circleLensShareMatchesTheGEOSIntersection() throws {
        let context = GEOSContext()
        let circle = CircleShape(center: Fixtures.center, radius: 100)
        let fenceDisc = try context.makePoint(x: 0, y: 0).buffer(width: 100, quadrantSegments: 256)
        for (offset, accuracy) in [(80.0, 30.0), (100, 20), (120, 25), (0, 150), (60, 50)] {
            let point = Fixtures.offset(east: offset)
            let disc = try context.makePoint(x: offset, y: 0).buffer(width: accuracy, quadrantSegments: 256)
            let expected = try disc.intersection(fenceDisc).area() / disc.area()
            #expect(abs(circle.overlapShare(point: point, accuracy: accuracy) - expected) < 0.002)
        }
    }
}

/// The banded containment the hot path uses must agree with the exact full-edge computation.
@Suite struct BandedContainmentTests {
    /// Only a simple polygon has a block: the engine measures a multipolygon through its shape.
    @Test func onlySimplePolygonsHaveABlock() {
        func square(_ longitude: Double) -> [Coordinate] {
            [(0.0, 0.0), (0, 0.001), (0.001, 0.001), (0.001, 0), (0, 0)].map {
                Coordinate(latitude: 52 + $0.0, longitude: longitude + $0.1)
            }
        }
        #expect(PolygonShape(unwrapped: [[square(4)]]).block != nil)
        #expect(PolygonShape(unwrapped: [[square(4)], [square(4.01)]]).block == nil)
    }

    /// Each part of a multipolygon has its own bands in the one table: every part's, not only the
    /// first's, agrees with the full scan.
    @Test func bandedContainmentOfEveryPartOfAMultiPolygonAgreesWithTheFullScan() {
        var generator = SplitMix(state: 9)
        func star(_ latitude: Double, _ longitude: Double, vertices: Int) -> [Coordinate] {
            var ring: [Coordinate] = (0..<vertices).map { index in
                let angle = Double(index) / Double(vertices) * 2 * .pi
                let radius = index.isMultiple(of: 2) ? 0.01 : Double.random(in: 0.002...0.009, using: &generator)
                return Coordinate(latitude: latitude + radius * sin(angle), longitude: longitude + radius * cos(angle))
            }
            ring.append(ring[0])
            return ring
        }
        let shape = PolygonShape(unwrapped: [
            [star(52.37, 4.89, vertices: 40)], [star(52.40, 4.89, vertices: 12)], [star(52.37, 4.93, vertices: 200)],
        ])
        #expect(shape.parts.count == 3 && shape.parts.map(\.bandCount) == [10, 3, 50])
        for _ in 0..<5_000 {
            let point = Coordinate(
                latitude: Double.random(in: 52.355...52.415, using: &generator),
                longitude: Double.random(in: 4.875...4.945, using: &generator))
            #expect(shape.signedDistance(to: point) == shape.scannedSignedDistance(to: point), "\(point)")
        }
    }

    @Test(arguments: [24, 400, 20_000])
    func bandedContainmentAgreesWithTheFullScan(vertices: Int) throws {
        var generator = SplitMix(state: UInt64(vertices))
        var ring: [Coordinate] = (0..<vertices).map { index in
            let angle = Double(index) / Double(vertices) * 2 * .pi
            let radius = index.isMultiple(of: 2) ? 0.01 : Double.random(in: 0.002...0.009, using: &generator)
            return Coordinate(latitude: 52.37 + radius * sin(angle), longitude: 4.89 + radius * cos(angle) * 1.6)
        }
        ring.append(ring[0])
        let hole = [(-1.0, -1.0), (-1, 1), (1, 1), (1, -1), (-1, -1)].map {
            Coordinate(latitude: 52.37 + $0.1 * 0.0008, longitude: 4.89 + $0.0 * 0.0012)
        }
        let shape = PolygonShape(unwrapped: [[ring, hole]])
        // The reference is a full scan: keep vertices × points near a million in debug builds.
        for _ in 0..<min(20_000, 1_000_000 / vertices) {
            let point = Coordinate(
                latitude: Double.random(in: 52.355...52.385, using: &generator),
                longitude: Double.random(in: 4.86...4.92, using: &generator))
            let limit = Double.random(in: 0...300, using: &generator)
            let s = shape.scannedSignedDistance(to: point)
            // The reported distance walks the bands as far as the nearest edge: the scan's value.
            #expect(shape.signedDistance(to: point) == s, "\(point)")
            // So does the engine's, read through the block (events of simple polygons).
            let whole = shape.block!.containment(of: point, measuringWithin: PolygonShape.everyEdge)
            #expect(signedDistance(inside: whole.inside, distance: whole.distance) == s, "\(point)")
            let (inside, distance) = shape.containment(of: point, measuringWithin: limit)
            // The engine reads a simple polygon through its block: the same measurement.
            let fromBlock = shape.block!.containment(of: point, measuringWithin: limit)
            #expect(fromBlock.inside == inside && fromBlock.distance == distance)
            if abs(s) > 1e-6 { #expect(inside == (s < 0), "\(point)") }
            if abs(s) <= limit - 1e-9 {
                #expect(abs(distance - abs(s)) < 1e-9, "\(point): \(distance) vs \(s)")
            } else if abs(s) > limit + 1e-9 {
                #expect(distance == .infinity)
            }
        }
    }
}

extension PolygonShape {
    /// `s(p)` by a scan of every edge of every part: the reference the banded measurements are
    /// checked against.
    func scannedSignedDistance(to point: Coordinate) -> Double {
        let y = frame.y(latitude: point.latitude)
        var inside = false
        var best = Double.infinity
        for part in parts {
            let x = frame.x(longitude: unwrap(point.longitude, near: part.centerLongitude))
            var crossings = false
            for ring in rings[part.rings] {
                for index in ring.lowerBound..<(ring.upperBound - 1) {
                    let a = points[index], b = points[index + 1]
                    if (a.y > y) != (b.y > y), x < a.x + (y - a.y) * (b.x - a.x) / (b.y - a.y) {
                        crossings.toggle()
                    }
                    best = min(best, PlanarMath.distanceSquared(px: x, py: y, ax: a.x, ay: a.y, bx: b.x, by: b.y))
                }
            }
            if crossings { inside = true }
        }
        return Fenceline.signedDistance(inside: inside, distance: best.squareRoot())
    }
}
