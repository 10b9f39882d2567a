/// A request's weekly windows, ready to answer "may it notify at this instant?" (SPEC §7).
///
/// Each window is `[start, end)` local time on the days it lists; an `end` at or before `start`
/// runs overnight into the next day (Monday 22:00–06:00 covers Monday night to Tuesday 06:00).
/// A class: a request's entry holds a reference, not the schedule and zone inline (few requests
/// have one).
final class ScheduleGate {
    let schedule: Schedule
    let clock: ZoneClock

    init?(_ schedule: Schedule) {
        guard let clock = ZoneClock(identifier: schedule.timeZone) else { return nil }
        self.schedule = schedule
        self.clock = clock
    }

    private static func weekday(ofDay day: Int64) -> Int {
        Int(((day + 4) % 7 + 7) % 7) + 1
    }

    /// Whether a notification may fire at `time`.
    func isOpen(at time: Timestamp) -> Bool {
        let local = clock.local(atSecond: time.microseconds.floorDividedBy(1_000_000).quotient)
        let (day, second) = local.floorDividedBy(86_400)
        let minute = Int(second / 60)
        let today = Self.weekday(ofDay: day)
        let yesterday = Self.weekday(ofDay: day - 1)
        for window in schedule.windows {
            if window.end > window.start {
                if window.days.contains(today) && minute >= window.start && minute < window.end { return true }
            } else {
                if window.days.contains(today) && minute >= window.start { return true }
                if window.days.contains(yesterday) && minute < window.end { return true }
            }
        }
        return false
    }

    /// The first instant after `time` at which a window opens (within the next eight days).
    func nextOpening(after time: Timestamp) -> Timestamp? {
        let local = clock.local(atSecond: time.microseconds.floorDividedBy(1_000_000).quotient)
        let firstDay = local.floorDividedBy(86_400).quotient - 1
        var best: Int64?
        for day in firstDay...(firstDay + 8) {
            let weekday = Self.weekday(ofDay: day)
            for window in schedule.windows where window.days.contains(weekday) {
                let instant = clock.instant(forLocal: day * 86_400 + Int64(window.start) * 60)
                if instant * 1_000_000 > time.microseconds, best.map({ instant < $0 }) ?? true { best = instant }
            }
        }
        return best.map { Timestamp(microseconds: $0 * 1_000_000) }
    }
}
