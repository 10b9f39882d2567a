import Fenceline
import TestSupport
import Testing

/// SPEC §5 "Initial state", "Dwell", "Repeats", the `devices` scope and SPEC §4 event order.
@Suite struct RegionPolicyTests {
    typealias F = Fixtures

    @Test func silentFirstFixSetsStateWithoutAnEvent() throws {
        let events = try F.run([F.circle(hysteresis: .naive)], [F.fix(0, east: 0), F.fix(1, east: 300)])
        #expect(events.map { F.label($0) } == ["exit@1"])
    }

    @Test func initialEnterFiresAtOnceIgnoringTheEnterDelay() throws {
        var hysteresis = Hysteresis.default
        hysteresis.enterDelay = TimeSpan(seconds: 30)
        let request = F.circle(hysteresis: hysteresis) { $0.initial = .enter }
        let events = try F.run([request], [F.fix(0, east: 0), F.fix(5, east: 0)])
        #expect(events.map { F.label($0) } == ["enter@0"])
        #expect(events.first?.since == F.at(0))
        // A first fix outside reports nothing; the later enter waits for the delay.
        let outside = try F.run([request], [F.fix(0, east: 300), F.fix(5, east: 0), F.fix(40, east: 0)])
        #expect(outside.map { F.label($0) } == ["enter@35"])
    }

    @Test func initialStateReportsEveryDeviceOnceEvenFarAway() throws {
        let request = F.circle(hysteresis: .naive) { $0.initial = .state }
        let events = try F.run(
            [request],
            [
                F.fix("near", 0, east: 0),
                F.fix("far", 1, east: 50_000),  // not even in the fence's index cell
                F.fix("far", 2, east: 40_000),
                F.fix("near", 3, east: 300),
            ])
        #expect(
            events.map { F.label($0, withDevice: true) } == [
                "state:inside/near@0", "state:outside/far@1", "exit/near@3",
            ])
    }

    @Test func bandFirstFixCountsAsOutside() throws {
        // s = 10: neither condition of the default preset; the device starts outside.
        let request = F.circle { $0.initial = .state }
        let events = try F.run([request], [F.fix(0, east: 110), F.fix(1, east: 50)])
        #expect(events.map { F.label($0) } == ["state:outside@0", "enter@1"])
    }

    @Test func requestAddedMidStreamStartsUnknownForEveryDevice() throws {
        let engine = try Engine(catalog: Catalog())
        var events = engine.process(F.fix(0, east: 300))
        try engine.add(F.circle(hysteresis: .naive))
        events += engine.process(F.fix(1, east: 0))  // first usable fix for the new request: silent
        events += engine.process(F.fix(2, east: 300))
        events += engine.finish()
        #expect(events.map { F.label($0) } == ["exit@2"])
    }

    @Test func dwellFiresOncePerVisitAfterTheEnter() throws {
        let request = F.circle(hysteresis: .naive) {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 60)
        }
        let events = try F.run(
            [request],
            [
                F.fix(0, east: 300), F.fix(10, east: 0), F.fix(40, east: 0), F.fix(100, east: 0),
                F.fix(110, east: 300), F.fix(120, east: 0),
            ], until: F.at(200))
        #expect(events.map { F.label($0) } == ["enter@10", "dwell@70", "exit@110", "enter@120", "dwell@180"])
    }

    @Test func exitFixAtTheDwellDueTimeWins() throws {
        let request = F.circle(hysteresis: .naive) {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 60)
        }
        let events = try F.run(
            [request], [F.fix(0, east: 300), F.fix(10, east: 0), F.fix(70, east: 300)], until: F.at(100))
        #expect(events.map { F.label($0) } == ["enter@10", "exit@70"])
    }

    @Test func dwellNeedsAVisitBegunByAnEnter() throws {
        let silent = F.circle(hysteresis: .naive) {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 60)
        }
        #expect(try F.run([silent], [F.fix(0, east: 0), F.fix(100, east: 0)]).isEmpty)
        let entering = F.circle(hysteresis: .naive) {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 60)
            $0.initial = .enter
        }
        #expect(
            try F.run([entering], [F.fix(0, east: 0), F.fix(100, east: 0)]).map { F.label($0) } == [
                "enter@0", "dwell@60",
            ])
    }

    @Test func exitConfirmedByItsTimerAtTheDwellDueTimeWins() throws {
        // The dwell (scheduled at the enter) and the exit confirmation (scheduled later) are both
        // due at 30: the exit is confirmed "by then", so there is no dwell (found by review).
        let request = F.circle {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 30)
            $0.initial = .enter
        }
        let events = try F.run([request], [F.fix(0, east: 0), F.fix(10, east: 200)], until: F.at(40))
        #expect(events.map { F.label($0) } == ["enter@0", "exit@30"])
        // One microsecond later the visit has lasted its dwell: both fire.
        let later = try F.run([request], [F.fix(0, east: 0), F.fix(10.000_001, east: 200)], until: F.at(40))
        #expect(later.map { F.label($0) } == ["enter@0", "dwell@30", "exit@30.000001"])
    }

    @Test func nonRepeatingRequestFiresOncePerDevice() throws {
        let request = F.circle(hysteresis: .naive) {
            $0.repeats = false
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 5)
        }
        let events = try F.run(
            [request],
            [
                F.fix("a", 0, east: 300), F.fix("a", 1, east: 0), F.fix("a", 2, east: 300), F.fix("a", 3, east: 0),
                F.fix("b", 4, east: 300), F.fix("b", 5, east: 0),
            ], until: F.at(100))
        #expect(events.map { F.label($0, withDevice: true) } == ["enter/a@1", "enter/b@5"])
    }

    @Test func mutedTransitionsStillChangeStateButDoNotUseUpARequest() throws {
        let request = F.circle(hysteresis: .naive) {
            $0.repeats = false
            $0.notifyOnEntry = false
        }
        let events = try F.run(
            [request],
            [F.fix(0, east: 300), F.fix(1, east: 0), F.fix(2, east: 300), F.fix(3, east: 0), F.fix(4, east: 300)])
        #expect(events.map { F.label($0) } == ["exit@2"])
    }

    /// Without `notifyOnExit` (or `notifyOnEntry`) a run gives the same events less that kind, under
    /// the naive hysteresis (events of the confirming fix) and the default one (events of timers).
    @Test(arguments: [Hysteresis.naive, Hysteresis.default])
    func eachNotifyFlagMutesOnlyItsKind(hysteresis: Hysteresis) throws {
        let readings = (0..<12).map { F.fix(Double($0) * 20, east: $0 % 4 < 2 ? 0 : 400) }
        let all = try F.run([F.circle(hysteresis: hysteresis)], readings, until: F.at(400)).map { F.label($0) }
        #expect(all.contains { $0.hasPrefix("exit@") } && all.contains { $0.hasPrefix("enter@") })
        let noExits = try F.run(
            [F.circle(hysteresis: hysteresis) { $0.notifyOnExit = false }], readings, until: F.at(400))
        #expect(noExits.map { F.label($0) } == all.filter { !$0.hasPrefix("exit@") })
        let noEnters = try F.run(
            [F.circle(hysteresis: hysteresis) { $0.notifyOnEntry = false }], readings, until: F.at(400))
        #expect(noEnters.map { F.label($0) } == all.filter { !$0.hasPrefix("enter@") })
    }

    @Test func devicesScopeLimitsARequestToItsDevices() throws {
        let request = F.circle(hysteresis: .naive, devices: ["truck-17"])
        let events = try F.run(
            [request],
            [
                F.fix("truck-17", 0, east: 300), F.fix("truck-18", 0, east: 300),
                F.fix("truck-17", 1, east: 0), F.fix("truck-18", 1, east: 0),
            ])
        #expect(events.map { F.label($0, withDevice: true) } == ["enter/truck-17@1"])
    }

    @Test func eventsOfOneInstantLeaveExitsFirstThenByRequestAndDevice() throws {
        // Two touching squares: moving from "b" into "a" exits b and enters a at the same fix.
        func square(_ id: String, west: Double) -> NotificationRequest {
            let ring = [(west, 52.369), (west + 0.002, 52.369), (west + 0.002, 52.371), (west, 52.371), (west, 52.369)]
                .map { Coordinate(latitude: $0.1, longitude: $0.0) }
            return NotificationRequest(
                id: id, trigger: .region(RegionTrigger(geometry: .polygons([[ring]]), hysteresis: .naive)))
        }
        let inB = Coordinate(latitude: 52.37, longitude: 4.8925)
        let inA = Coordinate(latitude: 52.37, longitude: 4.8895)
        let events = try F.run(
            [square("a", west: 4.888), square("b", west: 4.891)],
            [
                F.fix("y", 0, inB), F.fix("x", 0, inB), F.fix("y", 1, inA), F.fix("x", 1, inA),
            ])
        #expect(
            events.map { F.label($0, withRequest: true, withDevice: true) } == [
                "b.exit/x@1", "b.exit/y@1", "a.enter/x@1", "a.enter/y@1",
            ])
        #expect(events.map(\.sequence) == [1, 2, 3, 4])
    }
}
