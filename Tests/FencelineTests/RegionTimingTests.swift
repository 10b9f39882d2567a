import Fenceline
import TestSupport
import Testing

/// SPEC §5 "Time" and §4 timers: delays, minFixes, band fixes, timers due exactly at a reading.
/// A circle of radius 100 m; a fix `east: x` lies at signed distance x − 100.
@Suite struct RegionTimingTests {
    typealias F = Fixtures

    @Test func defaultPresetEntersAtOnceAndExitsAfterTwentySeconds() throws {
        let events = try F.run(
            [F.circle()],
            [
                F.fix(0, east: 300),  // first fix outside: silent
                F.fix(10, east: 50),  // s = -50: enter, no enter delay
                F.fix(20, east: 130),  // s = 30 > 20: exit streak, due 40
                F.fix(30, east: 140),
                F.fix(50, east: 150),  // the clock passes 40: the timer fires first
            ])
        #expect(events.map { F.label($0) } == ["enter@10", "exit@40"])
        #expect(events[1].since == F.at(20))
        #expect(events.map(\.sequence) == [1, 2])
    }

    @Test func exitConfirmedByTimerCarriesDueTimeAndLastFix() throws {
        let events = try F.run(
            [F.circle()],
            [
                F.fix("d1", 0, east: 0),
                F.fix("d1", 10, east: 200),  // s = 100, the device then goes silent
                F.fix("other", 100, east: 5_000),  // another device moves the clock past 30
            ])
        let exit = try #require(events.first)
        #expect(F.label(exit) == "exit@30")
        #expect(exit.position?.coordinate == F.offset(east: 200))
        #expect(abs((exit.distance ?? 0) - 100) < 1e-6)
    }

    @Test func readingAtTheDueInstantIsAppliedBeforeTheTimer() throws {
        // The streak's timer is due at 30; a fix stamped 30 that no longer meets the exit
        // condition is evidence at the due time, so it cancels the streak.
        let cancelled = try F.run(
            [F.circle()],
            [
                F.fix(0, east: 0), F.fix(10, east: 200), F.fix(30, east: 0), F.fix(31, east: 200),
            ], until: F.at(60))
        #expect(cancelled.map { F.label($0) } == ["exit@51"])
        // A fix at 30 that still meets it lets the timer confirm at 30.
        let confirmed = try F.run([F.circle()], [F.fix(0, east: 0), F.fix(10, east: 200), F.fix(30, east: 200)])
        #expect(confirmed.map { F.label($0) } == ["exit@30"])
    }

    @Test func untilFiresTimersDueAtOrBeforeIt() throws {
        let readings = [F.fix(0, east: 0), F.fix(10, east: 200)]
        #expect(try F.run([F.circle()], readings).isEmpty)
        #expect(try F.run([F.circle()], readings, until: F.at(29.999)).isEmpty)
        #expect(try F.run([F.circle()], readings, until: F.at(30)).map { F.label($0) } == ["exit@30"])
    }

    @Test func minFixesCountsConsecutiveFixesMeetingTheCondition() throws {
        var hysteresis = Hysteresis.default
        hysteresis.exitDelay = .zero
        hysteresis.minFixes = 3
        let events = try F.run(
            [F.circle(hysteresis: hysteresis)],
            [
                F.fix(0, east: 0),
                F.fix(1, east: 200), F.fix(2, east: 200),
                F.fix(3, east: 0),  // back inside: the streak of two ends
                F.fix(4, east: 200), F.fix(5, east: 200), F.fix(6, east: 200),
            ])
        #expect(events.map { F.label($0) } == ["exit@6"])
        #expect(events.first?.since == F.at(4))
    }

    @Test func delayAndMinFixesConfirmAtTheLaterOfTheTwo() throws {
        var hysteresis = Hysteresis.naive
        hysteresis.enterDelay = TimeSpan(seconds: 10)
        hysteresis.minFixes = 3
        // Third fix after the delay: confirmed at that fix.
        let late = try F.run(
            [F.circle(hysteresis: hysteresis)],
            [
                F.fix(0, east: 300), F.fix(1, east: 0), F.fix(2, east: 0), F.fix(15, east: 0),
            ])
        #expect(late.map { F.label($0) } == ["enter@15"])
        #expect(late.first?.since == F.at(1))
        // Three fixes before the delay ends: confirmed by the timer at since + delay.
        let early = try F.run(
            [F.circle(hysteresis: hysteresis)],
            [
                F.fix(0, east: 300), F.fix(1, east: 0), F.fix(2, east: 0), F.fix(3, east: 0), F.fix(20, east: 0),
            ])
        #expect(early.map { F.label($0) } == ["enter@11"])
    }

    @Test func bandFixCancelsTheStreak() throws {
        let events = try F.run(
            [F.circle()],
            [
                F.fix(0, east: 0),
                F.fix(10, east: 150),  // s = 50: exit streak due 30
                F.fix(20, east: 110),  // s = 10: in the band, cancels
                F.fix(25, east: 150),  // new streak due 45
            ], until: F.at(50))
        #expect(events.map { F.label($0) } == ["exit@45"])
        #expect(events.first?.since == F.at(25))
    }

    @Test func timersOfManyDevicesFireInDueOrderBeforeTheReadingThatMovedTheClock() throws {
        let events = try F.run(
            [F.circle()],
            [
                F.fix("a", 0, east: 0), F.fix("b", 0, east: 0),
                F.fix("b", 5, east: 200),  // due 25
                F.fix("a", 8, east: 200),  // due 28
                F.fix("c", 100, east: 0),  // first fix of c: silent
            ])
        #expect(events.map { F.label($0, withDevice: true) } == ["exit/b@25", "exit/a@28"])
    }

    @Test func staleReadingsAreSkippedAndEqualTimesApplyInOrder() throws {
        let engine = try Engine(catalog: Catalog(requests: [F.circle(hysteresis: .naive)]))
        var events: [Event] = []
        for reading in [F.fix(0, east: 300), F.fix(10, east: 0), F.fix(5, east: 300), F.fix(10, east: 300)] {
            events += engine.process(reading)
        }
        events += engine.finish()
        #expect(engine.statistics.stale == 1)
        // The two fixes stamped 10 apply in input order: enter, then exit, both at 10; within the
        // instant exits are listed before enters (SPEC §4).
        #expect(events.map { F.label($0) } == ["exit@10", "enter@10"])
    }

    @Test func reorderWindowGivesTheEventsOfTheSortedInput() throws {
        let sorted = [
            F.fix(0, east: 300), F.fix(1, east: 0), F.fix(2, east: 200), F.fix(3, east: 0), F.fix(4, east: 300),
        ]
        let shuffled = [sorted[0], sorted[2], sorted[1], sorted[4], sorted[3]]
        let window = Engine.Configuration(reorderWindow: TimeSpan(seconds: 5))
        let expected = try F.run([F.circle(hysteresis: .naive)], sorted)
        let reordered = try F.run([F.circle(hysteresis: .naive)], shuffled, configuration: window)
        let unordered = try F.run([F.circle(hysteresis: .naive)], shuffled)
        #expect(expected.map { F.label($0) } == ["enter@1", "exit@2", "enter@3", "exit@4"])
        #expect(reordered == expected)
        #expect(unordered != expected)
    }
}
