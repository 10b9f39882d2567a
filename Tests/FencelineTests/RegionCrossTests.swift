import TestSupport
import Testing

@testable import Fenceline

/// SPEC §5 "Cross": a path between two outside fixes that passes through the fence.
@Suite struct RegionCrossTests {
    typealias F = Fixtures

    static func crossing(
        _ id: String = "gate", center: Coordinate = F.center, radius: Double = 50, path: CrossingPath = .geodesic
    ) -> NotificationRequest {
        F.circle(id, center: center, radius: radius, hysteresis: .naive) {
            $0.notifyOnCross = true
            $0.crossing = path
        }
    }

    @Test func fastVehicleBetweenTwoFixesCrossesOnce() throws {
        let events = try F.run([Self.crossing()], [F.fix(0, east: -500), F.fix(10, east: 500), F.fix(20, east: 1_500)])
        #expect(events.map { F.label($0) } == ["cross@10"])
        #expect(abs((events[0].distance ?? 0) - 450) < 0.01)
    }

    @Test func pathThatMissesTheFenceIsNoCross() throws {
        let events = try F.run(
            [Self.crossing()],
            [
                F.fix(0, F.offset(east: -500, north: 60)), F.fix(10, F.offset(east: 500, north: 60)),
            ])
        #expect(events.isEmpty)
    }

    @Test func crossNeedsBothFixesOutside() throws {
        let events = try F.run([Self.crossing()], [F.fix(0, east: -500), F.fix(10, east: 0), F.fix(20, east: 500)])
        #expect(events.map { F.label($0) } == ["enter@10", "exit@20"])
    }

    @Test func crossNeedsTheStateOutsideAfterBothFixes() throws {
        // Default hysteresis: a fix 10 m out is in the band, so the device stays inside after it;
        // the next outside fix exits (after the delay) and is no cross.
        let request = F.circle(radius: 50) { $0.notifyOnCross = true }
        let events = try F.run(
            [request],
            [
                F.fix(0, east: 0), F.fix(1, east: 60), F.fix(2, east: -500), F.fix(30, east: -600),
            ])
        #expect(events.map { F.label($0) } == ["exit@22"])
    }

    @Test func geodesicAndPlanarPathsDifferOnLongHops() throws {
        // From 60°N 10°W to 60°N 10°E the great circle peaks near 60.38°N at 0°; the lon/lat
        // segment stays on 60°N. One fence on each path, 3 km wide, 42 km apart.
        let a = Coordinate(latitude: 60, longitude: -10)
        let b = Coordinate(latitude: 60, longitude: 10)
        let onGreatCircle = Coordinate(latitude: 60.38, longitude: 0)
        let onParallel = Coordinate(latitude: 60, longitude: 0)
        let requests = [
            Self.crossing("geo-on-gc", center: onGreatCircle, radius: 3_000),
            Self.crossing("geo-on-parallel", center: onParallel, radius: 3_000),
            Self.crossing("planar-on-gc", center: onGreatCircle, radius: 3_000, path: .planar),
            Self.crossing("planar-on-parallel", center: onParallel, radius: 3_000, path: .planar),
        ]
        let events = try F.run(requests, [F.fix(0, a), F.fix(600, b)])
        #expect(events.map(\.requestID) == ["geo-on-gc", "planar-on-parallel"])
    }

    @Test func planarPathTakesTheShortWayAcrossTheAntimeridian() throws {
        let seam = Coordinate(latitude: -17, longitude: 180)
        let events = try F.run(
            [
                Self.crossing(center: seam, radius: 2_000, path: .planar),
                Self.crossing("geo", center: seam, radius: 2_000),
            ],
            [
                F.fix(0, Coordinate(latitude: -17, longitude: 179.9)),
                F.fix(60, Coordinate(latitude: -17, longitude: -179.9)),
            ])
        #expect(events.map(\.requestID) == ["gate", "geo"])
    }

    @Test func polygonCrossUsesTheDensifiedGreatCircle() throws {
        let ring = [(4.95, 52.30), (4.96, 52.30), (4.96, 52.45), (4.95, 52.45), (4.95, 52.30)]
            .map { Coordinate(latitude: $0.1, longitude: $0.0) }
        var trigger = RegionTrigger(geometry: .polygons([[ring]]), hysteresis: .naive)
        trigger.notifyOnCross = true
        let events = try F.run(
            [NotificationRequest(id: "strip", trigger: .region(trigger))],
            [
                F.fix(0, Coordinate(latitude: 52.37, longitude: 4.80)),
                F.fix(300, Coordinate(latitude: 52.38, longitude: 5.20)),
            ])
        #expect(events.map { F.label($0) } == ["cross@300"])
    }
}

/// The planar path of a circle fence is measured by haversine along the lon/lat segment, so it is
/// right for large circles near the poles too (found by review: a flat frame was 130 m off at 80° N).
@Suite struct PlanarCircleCrossTests {
    typealias F = Fixtures

    @Test func meridianPathCrossesALargePolarCircleInBothModes() throws {
        // Along a meridian the lon/lat segment and the great circle are the same line.
        let center = Coordinate(latitude: 80, longitude: 0)
        let requests = [
            RegionCrossTests.crossing("planar", center: center, radius: 100_000, path: .planar),
            RegionCrossTests.crossing("geodesic", center: center, radius: 100_000),
        ]
        // The segment passes 99.97 km from the centre: inside by about 30 m.
        let events = try F.run(
            requests,
            [
                F.fix(0, Coordinate(latitude: 79, longitude: 5.1842)),
                F.fix(600, Coordinate(latitude: 81, longitude: 5.1842)),
            ])
        #expect(events.map(\.requestID) == ["geodesic", "planar"])
    }

    @Test func planarNearestDistanceMatchesDenseSampling() {
        var generator = SplitMix(state: 11)
        for _ in 0..<300 {
            let center = Coordinate(
                latitude: Double.random(in: -85...85, using: &generator),
                longitude: Double.random(in: -180...180, using: &generator))
            let circle = CircleShape(center: center, radius: Double.random(in: 50...200_000, using: &generator))
            let a = Coordinate(
                latitude: max(-89, min(89, center.latitude + Double.random(in: -3...3, using: &generator))),
                longitude: center.longitude + Double.random(in: -5...5, using: &generator))
            let b = Coordinate(
                latitude: max(-89, min(89, center.latitude + Double.random(in: -3...3, using: &generator))),
                longitude: center.longitude + Double.random(in: -5...5, using: &generator))
            var dense = Double.infinity
            for step in 0...20_000 {
                let t = Double(step) / 20_000
                let point = Coordinate(
                    latitude: a.latitude + (b.latitude - a.latitude) * t,
                    longitude: a.longitude + (b.longitude - a.longitude) * t)
                dense = min(dense, point.distance(to: center))
            }
            // Dense sampling overestimates the minimum by at most half a step; the search must not do worse.
            #expect(circle.nearestDistance(alongLonLatSegmentFrom: a, to: b) <= dense + 1e-6)
        }
    }
}
