import TestSupport
import Testing

@testable import Fenceline

/// The two state machines on their own: inputs in, actions out, timers fired by hand.
@Suite struct RegionStateMachineTests {
    typealias Machine = RegionStateMachine
    static let t = Fixtures.at

    static func rules(enter: Double = 0, exit: Double = 0, minFixes: Int = 1, dwell: Double? = nil) -> Machine.Rules {
        Machine.Rules(
            enterDelay: TimeSpan(seconds: enter), exitDelay: TimeSpan(seconds: exit), minFixes: minFixes,
            dwell: dwell.map { TimeSpan(seconds: $0) })
    }

    @Test func firstFixSetsTheStateByPolicy() {
        let rules = Self.rules(dwell: 30)
        let (silent, quiet) = Machine.first(.enter, at: Self.t(0), policy: .silent, rules: rules, token: 1)
        #expect(silent.isInside && quiet == .none && !silent.awaitsDwell)
        let (entered, enter) = Machine.first(.enter, at: Self.t(0), policy: .enter, rules: rules, token: 2)
        #expect(enter.output == .enter(since: Self.t(0), time: Self.t(0)))
        #expect(enter.dwell == Machine.Timer(due: Self.t(30), token: 2) && entered.awaitsDwell(token: 2))
        let (outside, state) = Machine.first(.band, at: Self.t(0), policy: .state, rules: rules, token: 3)
        #expect(!outside.isInside && state.output == .state(inside: false, time: Self.t(0)))
        let (_, none) = Machine.first(.exit, at: Self.t(0), policy: .enter, rules: rules, token: 4)
        #expect(none == .none)
    }

    @Test func aDelayedEnterIsConfirmedByItsTimerAndABandFixCancelsIt() {
        var machine = Machine()
        let rules = Self.rules(enter: 10)
        let start = machine.fix(.enter, at: Self.t(0), rules: rules, token: 7)
        #expect(start.confirmation == Machine.Timer(due: Self.t(10), token: 7) && start.output == nil)
        // A fix stamped exactly at the delay's end leaves it to the timer.
        #expect(machine.fix(.enter, at: Self.t(10), rules: rules, token: 8) == .none)
        let confirmed = machine.confirmationDue(token: 7, at: Self.t(10), rules: rules, dwellToken: 9)
        #expect(confirmed.output == .enter(since: Self.t(0), time: Self.t(10)) && machine.isInside)
        // Out again: an exit streak that a band fix cuts; its timer then does nothing.
        var other = Machine()
        _ = other.fix(.enter, at: Self.t(0), rules: rules, token: 1)
        #expect(other.fix(.band, at: Self.t(5), rules: rules, token: 2) == .none)
        #expect(other.pendingStreak == nil)
        #expect(other.confirmationDue(token: 1, at: Self.t(10), rules: rules, dwellToken: 3) == .none)
        #expect(!other.isInside)
    }

    @Test func minFixesWaitsForEnoughFixesAfterTheDelay() {
        var machine = Machine()
        let rules = Self.rules(enter: 5, minFixes: 3)
        _ = machine.fix(.enter, at: Self.t(0), rules: rules, token: 1)
        _ = machine.fix(.enter, at: Self.t(1), rules: rules, token: 2)
        // The delay is over but only two fixes met it: the timer waits for the third.
        #expect(machine.confirmationDue(token: 1, at: Self.t(5), rules: rules, dwellToken: 3) == .none)
        #expect(machine.pendingStreak?.fixes == 2)
        let third = machine.fix(.enter, at: Self.t(7), rules: rules, token: 4)
        #expect(third.output == .enter(since: Self.t(0), time: Self.t(7)))
    }

    @Test func dwellFiresOncePerVisitUnlessAnExitIsConfirmedByThen() {
        let rules = Self.rules(exit: 10, dwell: 30)
        var machine = Machine()
        let enter = machine.fix(.enter, at: Self.t(0), rules: rules, token: 1)
        #expect(enter.dwell == Machine.Timer(due: Self.t(30), token: 1))
        #expect(machine.dwellDue(token: 1, at: Self.t(30), rules: rules).output == .dwell(time: Self.t(30)))
        #expect(machine.dwellDue(token: 1, at: Self.t(30), rules: rules) == .none)  // once
        // Next visit: an exit streak whose confirmation falls due at the dwell's instant wins.
        var second = Machine()
        _ = second.fix(.enter, at: Self.t(0), rules: rules, token: 5)
        _ = second.fix(.exit, at: Self.t(20), rules: rules, token: 6)
        #expect(second.dwellDue(token: 5, at: Self.t(30), rules: rules) == .none)
        #expect(
            second.confirmationDue(token: 6, at: Self.t(30), rules: rules, dwellToken: 7).output
                == .exit(since: Self.t(20), time: Self.t(30)))
        // An exit voids the visit's dwell timer.
        var third = Machine()
        _ = third.fix(.enter, at: Self.t(0), rules: Self.rules(dwell: 30), token: 8)
        _ = third.fix(.exit, at: Self.t(5), rules: Self.rules(dwell: 30), token: 9)
        #expect(!third.awaitsDwell(token: 8))
        #expect(third.dwellDue(token: 8, at: Self.t(30), rules: Self.rules(dwell: 30)) == .none)
    }

    @Test func aMachineSurvivesACheckpointRoundTrip() throws {
        var machine = Machine()
        let rules = Self.rules(enter: 10, dwell: 30)
        _ = machine.fix(.enter, at: Self.t(0), rules: rules, token: 3)
        var writer = CheckpointWriter()
        machine.write(to: &writer)
        let bytes = writer.bytes
        var restored = try bytes.withUnsafeBytes { raw in
            var reader = CheckpointReader(raw)
            return try Machine(from: &reader)
        }
        #expect(restored.pendingStreak?.since == Self.t(0))
        #expect(
            restored.confirmationDue(token: 3, at: Self.t(10), rules: rules, dwellToken: 4).output
                == machine.confirmationDue(token: 3, at: Self.t(10), rules: rules, dwellToken: 4).output)
    }
}

@Suite struct BeaconStateMachineTests {
    typealias Machine = BeaconStateMachine
    static let t = Fixtures.at

    static func rules(enter: Double = 0, exit: Double? = nil, timeout: Double = 30) -> Machine.Rules {
        Machine.Rules(
            enterDelay: TimeSpan(seconds: enter), exitDelay: exit.map { TimeSpan(seconds: $0) },
            exitTimeout: TimeSpan(seconds: timeout))
    }

    @Test func entersAtOnceAndTimesOutFromTheLastCountingSighting() {
        var machine = Machine()
        let rules = Self.rules()
        let enter = machine.sighting(counts: true, at: Self.t(0), rules: rules, token: 1)
        #expect(enter.output == .enter(since: Self.t(0), time: Self.t(0)))
        #expect(enter.timers == [Machine.Timer(kind: .timeout, due: Self.t(30), token: 1)])
        let refresh = machine.sighting(counts: true, at: Self.t(20), rules: rules, token: 2)
        #expect(refresh.timers == [Machine.Timer(kind: .timeout, due: Self.t(50), token: 2)])
        // The first timeout's token is stale; the second exits, since the last counting sighting.
        #expect(machine.timerDue(.timeout, token: 1, at: Self.t(30), rules: rules, nextToken: 3) == .none)
        let exit = machine.timerDue(.timeout, token: 2, at: Self.t(50), rules: rules, nextToken: 4)
        #expect(exit.output == .exit(since: Self.t(20), time: Self.t(50), byTimeout: true) && !machine.isInside)
    }

    @Test func anEnterDelayNeedsEverySightingToCount() {
        var machine = Machine()
        let rules = Self.rules(enter: 5)
        let start = machine.sighting(counts: true, at: Self.t(0), rules: rules, token: 1)
        #expect(start.timers == [Machine.Timer(kind: .enter, due: Self.t(5), token: 1)])
        _ = machine.sighting(counts: false, at: Self.t(2), rules: rules, token: 2)  // breaks the streak
        #expect(machine.timerDue(.enter, token: 1, at: Self.t(5), rules: rules, nextToken: 3) == .none)
        _ = machine.sighting(counts: true, at: Self.t(3), rules: rules, token: 4)
        let enter = machine.timerDue(.enter, token: 4, at: Self.t(8), rules: rules, nextToken: 5)
        #expect(enter.output == .enter(since: Self.t(3), time: Self.t(8)))
    }

    @Test func anExitDelayExitsOnSightingsThatStopCounting() {
        var machine = Machine()
        let rules = Self.rules(exit: 4)
        _ = machine.sighting(counts: true, at: Self.t(0), rules: rules, token: 1)
        let far = machine.sighting(counts: false, at: Self.t(2), rules: rules, token: 2)
        #expect(far.timers == [Machine.Timer(kind: .exit, due: Self.t(6), token: 2)])
        // A counting sighting cancels it; the next far one starts again.
        _ = machine.sighting(counts: true, at: Self.t(3), rules: rules, token: 3)
        #expect(machine.timerDue(.exit, token: 2, at: Self.t(6), rules: rules, nextToken: 4) == .none)
        _ = machine.sighting(counts: false, at: Self.t(7), rules: rules, token: 5)
        let exit = machine.timerDue(.exit, token: 5, at: Self.t(11), rules: rules, nextToken: 6)
        #expect(exit.output == .exit(since: Self.t(7), time: Self.t(11), byTimeout: false))
        // Without an exit delay a far sighting only fails to refresh the timeout.
        var plain = Machine()
        _ = plain.sighting(counts: true, at: Self.t(0), rules: Self.rules(), token: 1)
        #expect(plain.sighting(counts: false, at: Self.t(5), rules: Self.rules(), token: 2) == .none)
        #expect(plain.isInside)
    }
}
