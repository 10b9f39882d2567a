import Fenceline
import TestSupport
import Testing

/// SPEC §8: pending and delivered lists, replacing by id, removal, the per-device cap.
@Suite struct NotificationManagementTests {
    typealias F = Fixtures

    static func content(_ title: String) -> NotificationContent {
        NotificationContent(title: title, body: "{event} by {device}")
    }

    /// "gate" and "other" entered by d1 at 1 s (other delivered last), the instant at 1 s closed
    /// or not; returns the engine, and "gate" with new content to add again.
    static func twoEnters(closingTheInstant: Bool) throws -> (engine: Engine, replacement: NotificationRequest) {
        var gate = F.circle(hysteresis: .naive)
        gate.content = Self.content("Gate")
        var other = F.circle("other", hysteresis: .naive)
        other.content = Self.content("Other")
        let engine = try Engine(catalog: Catalog(requests: [gate, other]))
        _ = engine.process(F.fix(0, east: 300))
        _ = engine.process(F.fix(1, east: 0))
        if closingTheInstant { _ = engine.process(F.fix(2, east: 0)) }
        #expect(engine.deliveredNotifications.map(\.requestID) == ["other", "gate"])
        gate.content = Self.content("Gate v2")
        return (engine, gate)
    }

    /// Re-adding an id moves its delivered entries to the top with the new content, whether it
    /// was still pending or removed from the pending list first.
    @Test(arguments: [false, true])
    func reAddingMovesDeliveredEntriesToTheTopWithTheNewContent(afterRemovePending: Bool) throws {
        let (engine, replacement) = try Self.twoEnters(closingTheInstant: true)
        if afterRemovePending { engine.removePendingRequests(withIdentifiers: ["gate"]) }
        try engine.add(replacement)
        let delivered = engine.deliveredNotifications
        #expect(delivered.map(\.requestID) == ["gate", "other"])
        #expect(delivered.first?.content.title == "Gate v2")
        #expect(delivered.first?.content.body == "enter by d1")
        #expect(engine.pendingRequestIDs == ["other", "gate"])
    }

    /// The notifications of the instant still open keep its SPEC §4 order, with the new content:
    /// they are the top already, and a later event of that instant takes its place among them.
    @Test func replacingInTheInstantOfItsNotificationsKeepsTheirOrder() throws {
        let (engine, replacement) = try Self.twoEnters(closingTheInstant: false)
        try engine.add(replacement)
        let delivered = engine.deliveredNotifications
        #expect(delivered.map(\.requestID) == ["other", "gate"])
        #expect(delivered.last?.content.title == "Gate v2")
    }

    @Test func removingPendingAndDeliveredAreIndependent() throws {
        let engine = try Engine(
            catalog: Catalog(requests: [F.circle(hysteresis: .naive), F.circle("other", hysteresis: .naive)]))
        _ = engine.process(F.fix(0, east: 300))
        _ = engine.process(F.fix(1, east: 0))
        engine.removePendingRequests(withIdentifiers: ["gate"])
        #expect(engine.pendingRequestIDs == ["other"])
        #expect(Set(engine.deliveredNotifications.map(\.requestID)) == ["gate", "other"])
        engine.removeDeliveredNotifications(withIdentifiers: ["other"])
        #expect(engine.deliveredNotifications.map(\.requestID) == ["gate"])
        #expect(engine.pendingRequestIDs == ["other"])
        engine.removeAllDeliveredNotifications()
        #expect(engine.deliveredNotifications.isEmpty)
        _ = engine.process(.control(ControlRecord(time: nil, operation: .removeAllPending)))
        #expect(engine.pendingRequests.isEmpty)
    }

    @Test func deliveredEntriesAreCappedPerDeviceOldestFirst() throws {
        let engine = try Engine(
            catalog: Catalog(requests: [F.circle(hysteresis: .naive)]),
            configuration: Engine.Configuration(deliveredLimit: 3))
        for step in 0..<10 {
            _ = engine.process(F.fix("a", Double(step), east: step.isMultiple(of: 2) ? 300 : 0))
            _ = engine.process(F.fix("b", Double(step), east: step < 2 ? (step == 0 ? 300 : 0) : 0))
        }
        _ = engine.finish()
        let delivered = engine.deliveredNotifications
        #expect(delivered.filter { $0.device == "a" }.map { F.label($0) } == ["enter@9", "exit@8", "enter@7"])
        #expect(delivered.filter { $0.device == "b" }.map { F.label($0) } == ["enter@1"])
    }

    @Test func removingDeliveredEntriesNeverBringsBackOnesDroppedByTheCap() throws {
        let engine = try Engine(
            catalog: Catalog(requests: [
                F.circle("x", hysteresis: .naive), F.circle("y", radius: 50, hysteresis: .naive),
            ]),
            configuration: Engine.Configuration(deliveredLimit: 2))
        for (step, east) in [300.0, 75, 300, 0].enumerated() {
            _ = engine.process(F.fix("a", Double(step), east: east))
        }
        _ = engine.finish()
        // Four delivered (x enter, x exit, x and y enter); the cap keeps the newest two.
        #expect(
            engine.deliveredNotifications.map { F.label($0, withRequest: true) }.sorted() == ["x.enter@3", "y.enter@3"])
        engine.removeDeliveredNotifications(withIdentifiers: ["y"])
        #expect(engine.deliveredNotifications.map { F.label($0, withRequest: true) } == ["x.enter@3"])
    }

    /// The cap counts each device's own entries, for every kind of firing: region events of the
    /// device's fixes and of its timers, and a scoped time trigger's one per listed device. Two
    /// spellings of one name with different bytes (precomposed "é", "e" with a combining accent)
    /// are two devices, as everywhere else in the engine.
    @Test func theCapCountsEachDevicesOwnEntries() throws {
        let precomposed = "caf\u{E9}", combining = "cafe\u{301}"
        let engine = try Engine(
            catalog: Catalog(requests: [
                F.circle("gate"),
                NotificationRequest(
                    id: "tick", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 60))),
                    devices: ["b", precomposed]),
            ]),
            configuration: Engine.Configuration(deliveredLimit: 1))
        // a: enter at 1, exit (after the default 20 s delay, by its timer) at 22; b and the two
        // spellings: outside at 0, enter at 2; the time trigger fires at 60 for b and the
        // precomposed name.
        var readings = [F.fix("a", 0, east: 300), F.fix("a", 1, east: 0), F.fix("a", 2, east: 300)]
        for device in ["b", precomposed, combining] {
            readings += [F.fix(device, 0, east: 300), F.fix(device, 2, east: 0)]
        }
        readings.append(F.fix("a", 30, east: 300))
        readings.sort { $0.time! < $1.time! }
        for reading in readings { _ = engine.process(reading) }
        _ = engine.finish(until: F.at(61))
        let newest = Dictionary(
            engine.deliveredNotifications.map {
                ($0.device!.unicodeScalars.map(\.value), F.label($0, withRequest: true))
            },
            uniquingKeysWith: { first, _ in "more than one: \(first)" })
        #expect(newest[Array("a".unicodeScalars.map(\.value))] == "gate.exit@22")
        #expect(newest[Array("b".unicodeScalars.map(\.value))] == "tick.fire@60")
        #expect(newest[Array(precomposed.unicodeScalars.map(\.value))] == "tick.fire@60")
        #expect(newest[Array(combining.unicodeScalars.map(\.value))] == "gate.enter@2")
        #expect(newest.count == 4)
    }

    @Test func nonRepeatingLocationRequestsArePendingPerDevice() throws {
        let request = F.circle(hysteresis: .naive, devices: ["a", "b"]) { $0.repeats = false }
        let engine = try Engine(catalog: Catalog(requests: [request]))
        _ = engine.process(F.fix("a", 0, east: 300))
        _ = engine.process(F.fix("a", 1, east: 0))
        #expect(engine.pendingRequestIDs == ["gate"])  // still pending for b
        _ = engine.process(F.fix("b", 2, east: 300))
        _ = engine.process(F.fix("b", 3, east: 0))
        #expect(engine.pendingRequestIDs.isEmpty)  // delivered to both, it can fire no more
        #expect(engine.deliveredNotifications.count == 2)
    }

    /// `pendingRequestCount`, counted without a list, is what `pendingRequests` lists: a start
    /// catalog not yet added, control records waiting for the clock, requests done for every
    /// device in scope, a one-shot timer fired, removals and additions.
    @Test func thePendingCountIsWhatThePendingListHolds() throws {
        let scoped = F.circle("scoped", hysteresis: .naive, devices: ["a"]) { $0.repeats = false }
        let alarm = NotificationRequest(
            id: "alarm", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 5), repeats: false)))
        let engine = try Engine(catalog: Catalog(requests: [F.circle(hysteresis: .naive), scoped, alarm]))
        var counts: [Int] = []
        func check(_ moment: String) {
            #expect(engine.pendingRequestCount == engine.pendingRequests.count, "\(moment)")
            counts.append(engine.pendingRequestCount)
        }
        check("before the first reading")
        _ = engine.process(.control(ControlRecord(time: nil, operation: .add(F.circle("late", radius: 40)))))
        check("an addition waiting for the clock")
        _ = engine.process(F.fix("a", 0, east: 300))
        check("the clock set")
        _ = engine.process(F.fix("a", 1, east: 0))
        check("scoped done for its one device")
        _ = engine.process(F.fix("a", 10, east: 0))
        check("the alarm fired")
        _ = engine.process(.control(ControlRecord(time: nil, operation: .removePending(["gate"]))))
        check("gate removed")
        _ = engine.process(.control(ControlRecord(time: nil, operation: .add(F.circle("gate")))))
        check("gate added again")
        #expect(counts == [3, 4, 4, 3, 2, 1, 2])
    }

    @Test func neverMatchingCalendarComponentsAreRefused() throws {
        let request = NotificationRequest(
            id: "feb30", trigger: .calendar(CalendarTrigger(dateComponents: CalendarComponents(month: 2, day: 30))))
        #expect(throws: CatalogError.self) { try Engine(catalog: Catalog(requests: [request])) }
        let fine = NotificationRequest(
            id: "feb29", trigger: .calendar(CalendarTrigger(dateComponents: CalendarComponents(month: 2, day: 29))))
        _ = try Engine(catalog: Catalog(requests: [fine]))
    }
}
