import Fenceline
import TestSupport
import Testing

/// SPEC §7 written out by hand: New York and Berlin across their 2026 transitions, calendar field
/// rules, time intervals and schedules.
@Suite struct TimeTriggerTests {
    typealias F = Fixtures

    static func calendar(
        _ components: CalendarComponents, id: String = "cal", zone: String = "America/New_York", repeats: Bool = true,
        devices: [String]? = nil, schedule: Schedule? = nil
    ) -> NotificationRequest {
        NotificationRequest(
            id: id, trigger: .calendar(CalendarTrigger(dateComponents: components, timeZone: zone, repeats: repeats)),
            devices: devices, schedule: schedule)
    }

    /// Fire times of `request` from a clock set at `start` and run to `end`.
    static func fires(_ request: NotificationRequest, from start: String, to end: String) throws -> [String] {
        let engine = try Engine(catalog: Catalog(requests: [request]))
        var events = engine.process(.control(ControlRecord(time: Timestamp(rfc3339: start)!, operation: .tick)))
        events += engine.finish(until: Timestamp(rfc3339: end)!)
        return events.map(\.time.rfc3339)
    }

    @Test func newYorkDailyNineAcrossBothTransitions() throws {
        let march = try Self.fires(
            Self.calendar(CalendarComponents(hour: 9)), from: "2026-03-06T15:00:00Z", to: "2026-03-09T23:00:00Z")
        #expect(march == ["2026-03-07T14:00:00Z", "2026-03-08T13:00:00Z", "2026-03-09T13:00:00Z"])
        let november = try Self.fires(
            Self.calendar(CalendarComponents(hour: 9)), from: "2026-10-30T14:00:00Z", to: "2026-11-02T23:00:00Z")
        #expect(november == ["2026-10-31T13:00:00Z", "2026-11-01T14:00:00Z", "2026-11-02T14:00:00Z"])
    }

    @Test func newYorkHalfPastTwoOnSpringForwardFiresAtThree() throws {
        let fires = try Self.fires(
            Self.calendar(CalendarComponents(hour: 2, minute: 30)), from: "2026-03-07T12:00:00Z",
            to: "2026-03-09T12:00:00Z")
        // 02:30 does not exist on 8 March: 03:00 EDT (07:00Z); on 9 March 02:30 EDT is 06:30Z.
        #expect(fires == ["2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"])
    }

    @Test func newYorkHalfPastOneOnFallBackFiresOnce() throws {
        let fires = try Self.fires(
            Self.calendar(CalendarComponents(hour: 1, minute: 30)), from: "2026-10-31T12:00:00Z",
            to: "2026-11-02T12:00:00Z")
        // 01:30 EDT (05:30Z) only, not 01:30 EST (06:30Z); then 01:30 EST on 2 November.
        #expect(fires == ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"])
    }

    @Test func berlinAcrossBothTransitions() throws {
        let spring = try Self.fires(
            Self.calendar(CalendarComponents(hour: 2, minute: 30), zone: "Europe/Berlin"), from: "2026-03-28T12:00:00Z",
            to: "2026-03-30T12:00:00Z")
        #expect(spring == ["2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"])
        let autumn = try Self.fires(
            Self.calendar(CalendarComponents(hour: 2, minute: 30), zone: "Europe/Berlin"), from: "2026-10-24T12:00:00Z",
            to: "2026-10-26T12:00:00Z")
        #expect(autumn == ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"])
        let sundays = try Self.fires(
            Self.calendar(CalendarComponents(hour: 2, minute: 30, weekday: 1), zone: "Europe/Berlin"),
            from: "2026-03-20T12:00:00Z", to: "2026-04-06T00:00:00Z")
        #expect(sundays == ["2026-03-22T01:30:00Z", "2026-03-29T01:00:00Z", "2026-04-05T00:30:00Z"])
    }

    @Test func unsetSmallerUnitsAreZeroAndLargerOnesMatchAnything() throws {
        // {weekday: 2}: Mondays at 00:00 UTC.
        #expect(
            try Self.fires(
                Self.calendar(CalendarComponents(weekday: 2), zone: "UTC"), from: "2026-03-01T00:00:00Z",
                to: "2026-03-16T00:00:00Z")
                == ["2026-03-02T00:00:00Z", "2026-03-09T00:00:00Z", "2026-03-16T00:00:00Z"])
        // {minute: 30}: every hour at :30:00.
        #expect(
            try Self.fires(
                Self.calendar(CalendarComponents(minute: 30), zone: "UTC"), from: "2026-03-01T00:00:00Z",
                to: "2026-03-01T02:45:00Z")
                == ["2026-03-01T00:30:00Z", "2026-03-01T01:30:00Z", "2026-03-01T02:30:00Z"])
        // {second: 15}: every minute.
        #expect(
            try Self.fires(
                Self.calendar(CalendarComponents(second: 15), zone: "UTC"), from: "2026-03-01T00:00:00Z",
                to: "2026-03-01T00:02:30Z")
                == ["2026-03-01T00:00:15Z", "2026-03-01T00:01:15Z", "2026-03-01T00:02:15Z"])
        // {month: 3}: 1 March 00:00 each year (day and smaller units at their first value).
        #expect(
            try Self.fires(
                Self.calendar(CalendarComponents(month: 3), zone: "UTC"), from: "2026-01-01T00:00:00Z",
                to: "2028-12-31T00:00:00Z")
                == ["2026-03-01T00:00:00Z", "2027-03-01T00:00:00Z", "2028-03-01T00:00:00Z"])
        // {day: 31}: only months that have one.
        #expect(
            try Self.fires(
                Self.calendar(CalendarComponents(day: 31), zone: "UTC"), from: "2026-03-01T00:00:00Z",
                to: "2026-08-01T00:00:00Z")
                == ["2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"])
        // Second Sunday of the month.
        #expect(
            try Self.fires(
                Self.calendar(CalendarComponents(weekday: 1, weekdayOrdinal: 2), zone: "UTC"),
                from: "2026-03-01T00:00:00Z", to: "2026-05-01T00:00:00Z")
                == ["2026-03-08T00:00:00Z", "2026-04-12T00:00:00Z"])
        // 29 February: leap years only.
        #expect(
            try Self.fires(
                Self.calendar(CalendarComponents(month: 2, day: 29), zone: "UTC"), from: "2026-01-01T00:00:00Z",
                to: "2032-12-31T00:00:00Z")
                == ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"])
    }

    @Test func aDateCenturiesAheadFiresInItsYear() throws {
        let far = Self.calendar(
            CalendarComponents(year: 2500, month: 6, day: 1, hour: 12), zone: "Europe/Berlin", repeats: false)
        #expect(
            try Self.fires(far, from: "2026-03-01T00:00:00Z", to: "2501-01-01T00:00:00Z") == ["2500-06-01T10:00:00Z"])
        let last = Self.calendar(
            CalendarComponents(year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59), zone: "UTC",
            repeats: false)
        let engine = try Engine(catalog: Catalog(requests: [last]))
        _ = engine.process(.control(ControlRecord(time: Timestamp(rfc3339: "2026-03-01T00:00:00Z")!, operation: .tick)))
        #expect(engine.nextTriggerDate(forRequest: "cal")?.rfc3339 == "9999-12-31T23:59:59Z")
        let past = Self.calendar(CalendarComponents(year: 2020, month: 1), zone: "UTC", repeats: false)
        #expect(try Self.fires(past, from: "2026-03-01T00:00:00Z", to: "2030-01-01T00:00:00Z").isEmpty)
    }

    @Test func firstFiringIsStrictlyAfterTheAddAndOneShotsMoveToDelivered() throws {
        let request = Self.calendar(CalendarComponents(hour: 9), zone: "UTC", repeats: false)
        let engine = try Engine(catalog: Catalog(requests: [request]))
        var events = engine.process(
            .control(ControlRecord(time: Timestamp(rfc3339: "2026-03-02T09:00:00Z")!, operation: .tick)))
        #expect(engine.nextTriggerDate(forRequest: "cal") == Timestamp(rfc3339: "2026-03-03T09:00:00Z"))
        events += engine.finish(until: Timestamp(rfc3339: "2026-03-10T00:00:00Z")!)
        #expect(events.map(\.time.rfc3339) == ["2026-03-03T09:00:00Z"])
        #expect(events.first?.device == nil)
        #expect(events.first?.trigger == .calendar)
        #expect(engine.pendingRequests.isEmpty)
        #expect(engine.deliveredNotifications.map(\.requestID) == ["cal"])
    }

    @Test func timeIntervalsStartAtTheAddOrTheirStart() throws {
        let once = NotificationRequest(
            id: "once", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 90))))
        let every = NotificationRequest(
            id: "every", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 60), repeats: true)),
            devices: ["b", "a"])
        let anchored = NotificationRequest(
            id: "anchored",
            trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 300), start: F.at(-3_600))))
        let events = try F.run([once, every, anchored], [F.fix(0, east: 0), F.fix(150, east: 0)], until: F.at(200))
        // "anchored" was due an hour before the add: it fires at once (at the add time).
        #expect(
            events.map { F.label($0, withRequest: true, withDevice: true) } == [
                "anchored.fire/-@0", "every.fire/a@60", "every.fire/b@60", "once.fire/-@90", "every.fire/a@120",
                "every.fire/b@120", "every.fire/a@180", "every.fire/b@180",
            ])
    }

    static let weekdays = Schedule(
        timeZone: "Europe/Amsterdam", windows: [Schedule.Window(days: [2, 3, 4, 5, 6], start: 8 * 60, end: 18 * 60)])
    static let nights = Schedule(timeZone: "UTC", windows: [Schedule.Window(days: [2], start: 22 * 60, end: 6 * 60)])

    @Test func scheduleGatesTimeTriggers() throws {
        // Hourly on Monday 2 March 2026 (Amsterdam is UTC+1): 07:00Z and later are 08:00 local and later.
        let hourly = Self.calendar(CalendarComponents(minute: 0), zone: "UTC", schedule: Self.weekdays)
        let fires = try Self.fires(hourly, from: "2026-03-02T05:30:00Z", to: "2026-03-02T09:30:00Z")
        #expect(fires == ["2026-03-02T07:00:00Z", "2026-03-02T08:00:00Z", "2026-03-02T09:00:00Z"])
        // An overnight window: Monday 22:00 to Tuesday 06:00.
        let night = Self.calendar(CalendarComponents(minute: 0), zone: "UTC", schedule: Self.nights)
        let nightFires = try Self.fires(night, from: "2026-03-02T20:30:00Z", to: "2026-03-03T07:30:00Z")
        #expect(nightFires.first == "2026-03-02T22:00:00Z")
        #expect(nightFires.last == "2026-03-03T05:00:00Z")
        #expect(nightFires.count == 8)
        // A one-shot interval that falls due while the schedule is shut fires when it opens.
        let reminder = NotificationRequest(
            id: "reminder", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 3_600))),
            schedule: Self.weekdays)
        #expect(
            try Self.fires(reminder, from: "2026-03-02T05:30:00Z", to: "2026-03-02T12:00:00Z") == [
                "2026-03-02T07:00:00Z"
            ])
    }

    @Test func scheduleGatesFencesButStateKeepsUpdating() throws {
        // 2026-03-02T08:00:00Z is Monday 09:00 in Amsterdam; 17:30Z is 18:30, outside.
        var request = F.circle(hysteresis: .naive) { $0.repeats = false }
        request.schedule = Self.weekdays
        let late = 9.5 * 3_600
        let events = try F.run(
            [request],
            [
                F.fix(late, east: 300), F.fix(late + 10, east: 0),  // enter muted at 18:30: not used up
                F.fix(late + 20, east: 300),  // exit muted too
                F.fix(24 * 3_600, east: 0),  // Tuesday 09:00: enter notified
                F.fix(24 * 3_600 + 10, east: 300),  // used up: no exit
            ])
        #expect(events.map { F.label($0) } == ["enter@86400"])
    }
}
