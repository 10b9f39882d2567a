import Foundation
import TestSupport
import Testing

@testable import Fenceline

/// Calendar triggers around every DST transition of 2020–2030 in the 11 zones that have one, of
/// the table's 15 (Data/calendar). The
/// expected instants are computed here from the table's offsets alone: a local time in a gap
/// fires at the transition (the first instant after the gap), one in an overlap at its first
/// occurrence, and nothing ever fires twice.
@Suite struct CalendarDSTTableTests {
    struct Transition: CustomStringConvertible {
        var zone: String
        var instant: Int64
        var before: Int64
        var after: Int64
        var isGap: Bool { after > before }
        var description: String { "\(zone) \(Timestamp(microseconds: instant * 1_000_000).rfc3339) \(before)→\(after)" }
    }

    static let transitions: [Transition] = {
        let url = Fixtures.dataDirectory.appendingPathComponent("calendar/dst-transitions-2020-2030.csv")
        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().map { line in
            let fields = line.split(separator: ",").map(String.init)
            return Transition(
                zone: fields[0], instant: Timestamp(rfc3339: fields[1])!.microseconds / 1_000_000,
                before: Int64(fields[2])!, after: Int64(fields[3])!)
        }
    }()

    static func rule(_ zone: String, local: Int64, _ kind: String) -> CalendarRule {
        let (day, secondOfDay) = local.floorDividedBy(86_400)
        let date = CivilDate(daysSinceEpoch: Int(day))
        var components = CalendarComponents(
            hour: Int(secondOfDay / 3600), minute: Int(secondOfDay / 60 % 60), second: Int(secondOfDay % 60))
        switch kind {
        case "weekly": components.weekday = Int(((day + 4) % 7 + 7) % 7) + 1
        case "monthly": components.day = date.day
        case "yearly":
            components.month = date.month
            components.day = date.day
        default: break
        }
        return CalendarRule(CalendarTrigger(dateComponents: components, timeZone: zone))!
    }

    static func at(_ seconds: Int64) -> Timestamp { Timestamp(microseconds: seconds * 1_000_000) }

    @Test func theTableHasEveryZone() {
        #expect(Self.transitions.count == 227)
        #expect(Set(Self.transitions.map(\.zone)).count == 11)
    }

    @Test func foundationOffsetsMatchTheTable() {
        for transition in Self.transitions {
            let clock = ZoneClock(identifier: transition.zone)!
            #expect(clock.offset(atSecond: transition.instant - 1) == transition.before, "\(transition)")
            #expect(clock.offset(atSecond: transition.instant) == transition.after, "\(transition)")
        }
    }

    @Test(arguments: ["daily", "weekly", "monthly", "yearly"])
    func localTimesInGapsFireAtTheEndOfTheGap(kind: String) {
        var checked = 0
        for transition in Self.transitions where transition.isGap {
            let gapStart = transition.instant + transition.before  // local wall time when the clock jumps
            let width = transition.after - transition.before
            for local in [gapStart, gapStart + width / 2, gapStart + width - 1] {
                let rule = Self.rule(transition.zone, local: local, kind)
                let added = Self.at(transition.instant - 6 * 3600)
                #expect(
                    rule.nextFiring(after: added) == Self.at(transition.instant), "\(kind) \(transition) local \(local)"
                )
                // Never twice: the next firing is on a later day (week, month, year) at the same wall time.
                let next = rule.nextFiring(after: Self.at(transition.instant))
                #expect(
                    next.map { $0.microseconds / 1_000_000 - transition.instant } ?? 0 > 20 * 3600,
                    "\(kind) \(transition)")
                checked += 1
            }
            // The wall time the clock jumps to exists and fires then; an hour before the gap is plain.
            let after = Self.rule(transition.zone, local: gapStart + width, kind)
            #expect(after.nextFiring(after: Self.at(transition.instant - 6 * 3600)) == Self.at(transition.instant))
            let earlier = Self.rule(transition.zone, local: gapStart - 3600, kind)
            #expect(
                earlier.nextFiring(after: Self.at(transition.instant - 6 * 3600))
                    == Self.at(gapStart - 3600 - transition.before))
        }
        #expect(checked == 113 * 3)
    }

    @Test(arguments: ["daily", "weekly", "monthly", "yearly"])
    func localTimesInOverlapsFireOnceAtTheFirstOccurrence(kind: String) {
        var checked = 0
        for transition in Self.transitions where !transition.isGap {
            let overlapStart = transition.instant + transition.after  // wall time the clock falls back to
            let width = transition.before - transition.after
            for local in [overlapStart, overlapStart + width / 2, overlapStart + width - 1] {
                let rule = Self.rule(transition.zone, local: local, kind)
                let first = local - transition.before
                #expect(
                    rule.nextFiring(after: Self.at(transition.instant - 6 * 3600)) == Self.at(first),
                    "\(kind) \(transition)")
                // The second occurrence (local − after) must not fire.
                let next = rule.nextFiring(after: Self.at(first))
                #expect(next != Self.at(local - transition.after), "\(kind) \(transition) fired twice")
                #expect(next.map { $0.microseconds / 1_000_000 - first } ?? 0 > 20 * 3600, "\(kind) \(transition)")
                checked += 1
            }
        }
        #expect(checked == 114 * 3)
    }

    @Test func hourlyRuleSkipsTheRepeatedHourAndCrossesTheGap() {
        for transition in Self.transitions {
            // A minute that exists in every hour: :45 (Lord Howe shifts by 30 minutes).
            let rule = CalendarRule(
                CalendarTrigger(dateComponents: CalendarComponents(minute: 45), timeZone: transition.zone))!
            var time = Self.at(transition.instant - 4 * 3600)
            var fired: [Int64] = []
            while fired.count < 8, let next = rule.nextFiring(after: time) {
                fired.append(next.microseconds / 1_000_000)
                time = next
            }
            // Expected from the table: every local HH:45 from 4 h before to 4 h after, each once,
            // at its first occurrence, or (in a gap) at the transition.
            var expected: [Int64] = []
            let startLocal = transition.instant - 4 * 3600 + transition.before
            var local = startLocal - ((startLocal % 3600) + 3600) % 3600 + 45 * 60
            while expected.count < 8 {
                defer { local += 3600 }
                let instant: Int64
                if local - transition.before < transition.instant {
                    instant = local - transition.before  // before the change (first occurrence in an overlap)
                } else if local - transition.after >= transition.instant {
                    instant = local - transition.after
                } else {
                    instant = transition.instant  // in a gap
                }
                if instant <= transition.instant - 4 * 3600 || expected.last == instant { continue }
                expected.append(instant)
            }
            #expect(
                fired == expected,
                "\(transition): \(fired.map { Self.at($0).rfc3339 }) vs \(expected.map { Self.at($0).rfc3339 })")
        }
    }

    /// The table's other four zones have no rows: no offset change in 2020–2030 (São Paulo dropped
    /// DST in 2019). Foundation must agree, and a daily rule must fire every 24 h on the dot.
    @Test(arguments: ["America/Sao_Paulo", "Asia/Yekaterinburg", "Asia/Tokyo", "Asia/Dubai"])
    func zonesWithoutTransitionsKeepOneOffsetAndFireDaily(zone: String) {
        #expect(!Self.transitions.contains { $0.zone == zone })
        let clock = ZoneClock(identifier: zone)!
        let start = Timestamp(rfc3339: "2020-01-01T00:00:00Z")!.microseconds / 1_000_000
        let end = Timestamp(rfc3339: "2031-01-01T00:00:00Z")!.microseconds / 1_000_000
        let offset = clock.offset(atSecond: start)
        var second = start
        while second < end {
            #expect(clock.offset(atSecond: second) == offset, "\(zone) at \(Self.at(second).rfc3339)")
            second += 6 * 3600
        }
        let rule = CalendarRule(
            CalendarTrigger(dateComponents: CalendarComponents(hour: 9, minute: 0), timeZone: zone))!
        var time = Self.at(start)
        var previous: Int64?
        for _ in 0..<366 {
            guard let next = rule.nextFiring(after: time) else { break }
            let instant = next.microseconds / 1_000_000
            #expect(((instant + offset) % 86_400 + 86_400) % 86_400 == 9 * 3600)
            if let previous { #expect(instant - previous == 86_400) }
            previous = instant
            time = next
        }
        #expect(previous != nil)
    }
}
