import Fenceline
import Foundation
import TestSupport
import Testing

/// SPEC §5 "Distance" and "Conditions": the boundary, cushions, the four accuracy modes, maxAccuracy.
@Suite struct RegionConditionTests {
    typealias F = Fixtures

    static func hysteresis(_ preset: Hysteresis.Preset = .naive, _ change: (inout Hysteresis) -> Void = { _ in })
        -> Hysteresis
    {
        var value = Hysteresis(preset: preset)
        change(&value)
        return value
    }

    @Test func fixExactlyOnTheBoundaryIsInside() throws {
        let events = try F.run(
            [F.circle(hysteresis: .naive)],
            [
                F.fix(0, east: 200), F.fix(1, east: 100), F.fix(2, east: 100.01),
            ])
        #expect(events.map { F.label($0) } == ["enter@1", "exit@2"])
        #expect(events.first?.distance == 0)
    }

    @Test func fixExactlyAtTheExitCushionDoesNotExit() throws {
        let events = try F.run(
            [F.circle(hysteresis: Self.hysteresis(.default) { $0.exitDelay = .zero })],
            [
                F.fix(0, east: 0), F.fix(1, east: 120), F.fix(2, east: 120.01),
            ])
        #expect(events.map { F.label($0) } == ["exit@2"])
    }

    @Test func fixExactlyAtTheEnterCushionEnters() throws {
        let events = try F.run(
            [F.circle(hysteresis: Self.hysteresis { $0.enterCushion = 10 })],
            [
                F.fix(0, east: 300), F.fix(1, east: 95), F.fix(2, east: 90),
            ])
        #expect(events.map { F.label($0) } == ["enter@2"])
    }

    @Test func conservativeModeNeedsTheWholeAccuracyRadius() throws {
        let request = F.circle(hysteresis: Self.hysteresis { $0.accuracy = .conservative })
        let events = try F.run(
            [request],
            [
                F.fix(0, east: 300, accuracy: 10),
                F.fix(1, east: 95, accuracy: 10),  // s + a = 5: band
                F.fix(2, east: 85, accuracy: 10),  // s + a = -5: enter
                F.fix(3, east: 105, accuracy: 10),  // s - a = -5: band
                F.fix(4, east: 115, accuracy: 10),  // s - a = 5: exit
            ])
        #expect(events.map { F.label($0) } == ["enter@2", "exit@4"])
    }

    @Test func generousModeEntersFromJustOutsideAndIndexWidensForIt() throws {
        let request = F.circle(hysteresis: Self.hysteresis { $0.accuracy = .generous })
        let events = try F.run(
            [request],
            [
                F.fix(0, east: 300, accuracy: 10),
                F.fix(1, east: 105, accuracy: 10),  // s − a = −5: enter although outside the circle's box
                F.fix(2, east: 108, accuracy: 10),  // s − a = −2: stays
                F.fix(3, east: 115, accuracy: 10),  // s − a = 5: exit
            ])
        #expect(events.map { F.label($0) } == ["enter@1", "exit@3"])
    }

    @Test func overlapModeUsesTheShareOfTheAccuracyDisc() throws {
        // Half-plane estimates for a disc of 20 m: 10 m deep ≈ 0.80 inside (band), 15 m ≈ 0.93 (enter);
        // 10 m out ≈ 0.20 (band), 15 m out ≈ 0.07 (exit).
        let events = try F.run(
            [F.circle(hysteresis: .android)],
            [
                F.fix(0, east: 300, accuracy: 20),
                F.fix(1, east: 90, accuracy: 20),
                F.fix(2, east: 85, accuracy: 20),
                F.fix(3, east: 110, accuracy: 20),
                F.fix(4, east: 115, accuracy: 20),
                F.fix(5, east: 99, accuracy: 0),  // accuracy 0: share 1 inside
            ])
        #expect(events.map { F.label($0) } == ["enter@2", "exit@4", "enter@5"])
    }

    @Test func overlapModeOnPolygonsIntersectsTheDiscWithGEOS() throws {
        // A square 0.002° wide; fixes due east of its centre at the east edge (share ½: band)
        // and 8 m inside it (half-plane share ≈ 0.95: enter).
        let west = 4.889, east = 4.891, south = 52.369, north = 52.371
        let square: RegionGeometry = .polygons([
            [
                [
                    Coordinate(latitude: south, longitude: west), Coordinate(latitude: south, longitude: east),
                    Coordinate(latitude: north, longitude: east), Coordinate(latitude: north, longitude: west),
                    Coordinate(latitude: south, longitude: west),
                ]
            ]
        ])
        let request = NotificationRequest(
            id: "square", trigger: .region(RegionTrigger(geometry: square, hysteresis: .android)))
        let edge = Coordinate(latitude: 52.37, longitude: east)
        let events = try F.run(
            [request],
            [
                F.fix(0, F.offset(edge, east: 100), accuracy: 10),
                F.fix(1, edge, accuracy: 10),
                F.fix(2, F.offset(edge, east: -8), accuracy: 10),
            ])
        #expect(events.map { F.label($0) } == ["enter@2"])
    }

    @Test func inaccurateFixesAreIgnoredButStillMoveTheClock() throws {
        let strict = F.circle("strict", hysteresis: Self.hysteresis(.default) { $0.maxAccuracy = 50 })
        let plain = F.circle("plain")
        let events = try F.run(
            [strict, plain],
            [
                F.fix("d1", 0, east: 0, accuracy: 5),
                F.fix("d2", 0, east: 0, accuracy: 5),
                F.fix("d2", 1, east: 200, accuracy: 5),  // d2 leaves both: due 21
                F.fix("d1", 10, east: 200, accuracy: 100),  // ignored by "strict", counts for "plain"
                F.fix("d1", 40, east: 200, accuracy: 100),  // moves the clock past 30: plain's timer for d1 fires
            ])
        #expect(
            events.map { F.label($0, withRequest: true, withDevice: true) } == [
                "plain.exit/d2@21", "strict.exit/d2@21", "plain.exit/d1@30",
            ])
    }

    @Test func polygonWithAHoleCountsTheHoleAsOutside() throws {
        func ring(_ half: Double) -> [Coordinate] {
            [(-1.0, -1.0), (1, -1), (1, 1), (-1, 1), (-1, -1)].map {
                Coordinate(latitude: 52.37 + $0.1 * half, longitude: 4.89 + $0.0 * half)
            }
        }
        let request = NotificationRequest(
            id: "donut",
            trigger: .region(RegionTrigger(geometry: .polygons([[ring(0.01), ring(0.002)]]), hysteresis: .naive)))
        let events = try F.run(
            [request],
            [
                F.fix(0, F.offset(east: 5_000)),
                F.fix(1, F.offset(east: 500)),  // in the ring
                F.fix(2, F.center),  // in the hole
                F.fix(3, F.offset(east: 500)),
            ])
        #expect(events.map { F.label($0) } == ["enter@1", "exit@2", "enter@3"])
        #expect((events[1].distance ?? 0) > 100)
    }

    @Test func corridorFollowsTheLineWithinItsWidth() throws {
        // Both ends on the centre's parallel, so the line is straight east-west in lon/lat.
        let line = [Coordinate(latitude: 52.37, longitude: 4.875), Coordinate(latitude: 52.37, longitude: 4.905)]
        let request = NotificationRequest(
            id: "route", trigger: .region(RegionTrigger(geometry: .corridor(path: line, width: 25), hysteresis: .naive))
        )
        let events = try F.run(
            [request],
            [
                F.fix(0, F.offset(east: 0, north: 60)),
                F.fix(1, F.offset(east: 0, north: 20)),  // s = −5
                F.fix(2, F.offset(east: 0, north: -26)),  // s = 1
            ])
        #expect(events.map { F.label($0) } == ["enter@1", "exit@2"])
        #expect(abs((events[0].distance ?? 0) + 5) < 0.01)
    }
}

/// The certificate that lets tracked pairs skip polygon measurements must never change an event:
/// `generous` mode with accuracy-free fixes has the same thresholds as `ignore` but is always
/// measured, so the two must agree on a long jittery walk back and forth across polygon edges.
@Suite struct CertificateDifferentialTests {
    @Test func ignoreModeWithCertificatesMatchesAlwaysMeasuredGenerousMode() throws {
        var generator = SplitMix(state: 99)
        var ring: [Coordinate] = (0..<40).map { index in
            let angle = Double(index) / 40 * 2 * .pi
            let radius = index.isMultiple(of: 2) ? 0.003 : 0.0015
            return Coordinate(latitude: 52.37 + radius * sin(angle), longitude: 4.89 + radius * cos(angle) * 1.6)
        }
        ring.append(ring[0])
        func request(_ id: String, _ mode: AccuracyMode) -> NotificationRequest {
            var hysteresis = Hysteresis.default
            hysteresis.accuracy = mode
            hysteresis.exitDelay = TimeSpan(seconds: 3)
            hysteresis.enterCushion = 5
            var trigger = RegionTrigger(geometry: .polygons([[ring]]), hysteresis: hysteresis)
            trigger.notifyOnDwell = true
            trigger.dwell = TimeSpan(seconds: 30)
            return NotificationRequest(id: id, trigger: .region(trigger))
        }
        var readings: [Reading] = []
        var lat = 52.37, lon = 4.89
        for step in 0..<90_000 {
            lat += Double.random(in: -0.00004...0.00004, using: &generator)
            lon += Double.random(in: -0.00006...0.00006, using: &generator)
            lat = min(max(lat, 52.365), 52.375)
            lon = min(max(lon, 4.882), 4.898)
            readings.append(
                Fixtures.fix(["a", "b", "c"][step % 3], Double(step / 3), Coordinate(latitude: lat, longitude: lon)))
        }
        let ignore = try Fixtures.run([request("x", .ignore)], readings)
        let generous = try Fixtures.run([request("x", .generous)], readings)
        #expect(ignore.count > 50)
        #expect(ignore == generous)
    }
}
