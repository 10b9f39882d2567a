import Fenceline
import TestSupport
import Testing

/// SPEC §8: pending and delivered lists, replacing by id, removal, the per-device cap.
@Suite struct NotificationManagementTests {
    typealias F = Fixtures

    static func content(_ title: String) -> NotificationContent {
        NotificationContent(title: title, body: "{event} by {device}")
    }

    @Test func replacingMovesDeliveredEntriesToTheTopWithTheNewContent() throws {
        var gate = F.circle(hysteresis: .naive)
        gate.content = Self.content("Gate")
        var other = F.circle("other", hysteresis: .naive)
        other.content = Self.content("Other")
        let engine = try Engine(catalog: Catalog(requests: [gate, other]))
        _ = engine.process(F.fix(0, east: 300))
        _ = engine.process(F.fix(1, east: 0))  // gate enter, other enter (other delivered last)
        #expect(engine.deliveredNotifications.map(\.requestID) == ["other", "gate"])
        var replacement = gate
        replacement.content = Self.content("Gate v2")
        try engine.add(replacement)
        let delivered = engine.deliveredNotifications
        #expect(delivered.map(\.requestID) == ["gate", "other"])
        #expect(delivered.first?.content.title == "Gate v2")
        #expect(delivered.first?.content.body == "enter by d1")
        #expect(engine.pendingRequestIDs == ["other", "gate"])
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

    @Test func neverMatchingCalendarComponentsAreRefused() throws {
        let request = NotificationRequest(
            id: "feb30", trigger: .calendar(CalendarTrigger(dateComponents: CalendarComponents(month: 2, day: 30))))
        #expect(throws: CatalogError.self) { try Engine(catalog: Catalog(requests: [request])) }
        let fine = NotificationRequest(
            id: "feb29", trigger: .calendar(CalendarTrigger(dateComponents: CalendarComponents(month: 2, day: 29))))
        _ = try Engine(catalog: Catalog(requests: [fine]))
    }
}
