/// The instants a calendar trigger fires at (SPEC §7): local date components in a zone, units
/// smaller than the smallest given one set to their first value (0, or 1 for day and month),
/// larger unset ones matching anything.
struct CalendarRule {
    let components: CalendarComponents
    let clock: ZoneClock
    private let hours: [Int]
    private let minutes: [Int]
    private let seconds: [Int]
    private let month: Int?
    private let day: Int?

    init?(_ trigger: CalendarTrigger) {
        guard let clock = ZoneClock(identifier: trigger.timeZone) else { return nil }
        let c = trigger.dateComponents
        self.components = c
        self.clock = clock
        // Units from largest to smallest; the smallest given one decides which are filled in.
        let dayGiven = c.day != nil || c.weekday != nil || c.weekdayOrdinal != nil
        let rank: Int
        if c.second != nil {
            rank = 5
        } else if c.minute != nil {
            rank = 4
        } else if c.hour != nil {
            rank = 3
        } else if dayGiven {
            rank = 2
        } else if c.month != nil {
            rank = 1
        } else {
            rank = 0
        }
        month = c.month ?? (rank < 1 ? 1 : nil)
        day = c.day ?? (rank < 2 && !dayGiven ? 1 : nil)
        hours = c.hour.map { [$0] } ?? (rank < 3 ? [0] : Array(0..<24))
        minutes = c.minute.map { [$0] } ?? (rank < 4 ? [0] : Array(0..<60))
        seconds = c.second.map { [$0] } ?? (rank < 5 ? [0] : Array(0..<60))
    }

    /// Whether a local date matches the date components.
    private func matches(_ date: CivilDate, daysSinceEpoch: Int) -> Bool {
        if let year = components.year, date.year != year { return false }
        if let month, date.month != month { return false }
        if let day, date.day != day { return false }
        if let weekday = components.weekday {
            // 1970-01-01 was a Thursday (weekday 5 with 1 = Sunday).
            let value = ((daysSinceEpoch + 4) % 7 + 7) % 7 + 1
            if value != weekday { return false }
        }
        if let ordinal = components.weekdayOrdinal, (date.day - 1) / 7 + 1 != ordinal { return false }
        return true
    }

    /// The first firing strictly after `time`, or `nil` when the rule never matches again
    /// (searched over 400 years, one Gregorian cycle, from `time` or the rule's year).
    func nextFiring(after time: Timestamp) -> Timestamp? {
        let afterSecond = time.microseconds.floorDividedBy(1_000_000).quotient
        // Start a few hours before the local time of `time`: no gap or overlap shifts more.
        let startLocal = clock.local(atSecond: afterSecond) - 3 * 3600
        var days = Int(startLocal.floorDividedBy(86_400).quotient)
        let startSecondOfDay = startLocal.floorDividedBy(86_400).remainder
        var first = true
        // A rule for a later year starts its search there (from the day before, for the zone's
        // offset), so a date centuries ahead is found as a near one is.
        if let year = components.year, CivilDate(daysSinceEpoch: days).year < year {
            days = max(days, CivilDate(year: year, month: 1, day: 1).daysSinceEpoch - 1)
            first = false
        }
        let lastDay = days + 146_097
        while days <= lastDay {
            defer {
                days += 1
                first = false
            }
            let date = CivilDate(daysSinceEpoch: days)
            if let year = components.year, date.year > year { return nil }
            guard matches(date, daysSinceEpoch: days) else { continue }
            for hour in hours {
                for minute in minutes {
                    for second in seconds {
                        let secondOfDay = Int64(hour * 3600 + minute * 60 + second)
                        if first && secondOfDay < startSecondOfDay { continue }
                        let instant = clock.instant(forLocal: Int64(days) * 86_400 + secondOfDay)
                        if instant * 1_000_000 > time.microseconds {
                            return Timestamp(microseconds: instant * 1_000_000)
                        }
                    }
                }
            }
        }
        return nil
    }
}
