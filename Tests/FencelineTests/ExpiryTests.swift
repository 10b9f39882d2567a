import Fenceline
import TestSupport
import Testing

/// SPEC §12 "Expiry": a request's `expires`, `removeDevice` and `--device-ttl`, each ending the
/// stays going on with an `exit` (reason `expired` or `removed`) and freeing what it should.
@Suite struct ExpiryTests {
    typealias F = Fixtures

    static func label(_ event: Event) -> String {
        var text = F.label(event, withRequest: true, withDevice: true)
        if let reason = event.reason { text += ":\(reason.rawValue)" }
        if let visit = event.visit { text += "#\(visit)" }
        if let duration = event.duration { text += ":\(Int(duration.seconds))s" }
        return text
    }

    static func run(_ requests: [NotificationRequest], _ readings: [Reading], ttl: Double? = nil) throws -> [String] {
        try F.run(
            requests, readings,
            configuration: Engine.Configuration(deviceTTL: ttl.map { TimeSpan(seconds: $0) })
        ).map(label)
    }

    @Test func anExpiringRequestExitsTheDevicesInsideAndLeavesPending() throws {
        var request = F.circle(hysteresis: .naive)
        request.expires = F.at(100)
        let engine = try Engine(catalog: Catalog(requests: [request]))
        var events: [Event] = []
        for reading in [F.fix("in", 50, east: 0), F.fix("out", 50, east: 300), F.fix("in", 120, east: 0)] {
            events += engine.process(reading)
        }
        events += engine.finish()
        #expect(events.map(Self.label) == ["gate.exit/in@100:expired#1:50s"])
        #expect(events.first?.since == F.at(100))
        #expect(engine.pendingRequestIDs.isEmpty)
    }

    @Test func readingsAndTimersOfTheExpiryInstantComeFirst() throws {
        // A dwell due at the expiry fires before it, and a fix stamped at it exits by itself.
        var dwelling = F.circle("dwelling", hysteresis: .naive) {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 50)
        }
        dwelling.expires = F.at(100)
        var leaving = F.circle("leaving", hysteresis: .naive)
        leaving.expires = F.at(100)
        let events = try Self.run(
            [dwelling, leaving],
            [
                F.fix("d", 40, east: 300), F.fix("d", 50, east: 0), F.fix("d", 100, east: 0), F.fix("e", 40, east: 0),
                F.fix("e", 100, east: 300), F.fix("d", 101, east: 0),
            ].sorted { $0.time! < $1.time! })
        // e stands in both from 40 (silently) and leaves at 100 by itself; d is still inside at the
        // expiry. Events of the instant leave exits first, by request then device.
        #expect(
            events == [
                "dwelling.enter/d@50:observed#1", "leaving.enter/d@50:observed#1", "dwelling.exit/d@100:expired#1:50s",
                "dwelling.exit/e@100:observed#1:60s", "leaving.exit/d@100:expired#1:50s",
                "leaving.exit/e@100:observed#1:60s", "dwelling.dwell/d@100:delayed#1",
            ])
    }

    @Test func removeDeviceExitsEverythingAndForgetsTheDevice() throws {
        var once = F.circle("once", hysteresis: .naive) { $0.repeats = false }
        once.devices = nil
        let requests = [F.circle(hysteresis: .naive), once]
        let engine = try Engine(catalog: Catalog(requests: requests))
        var events: [Event] = []
        for reading in [F.fix(0, east: 300), F.fix(10, east: 0), F.fix(20, east: 0)] {
            events += engine.process(reading)
        }
        events += engine.process(.control(ControlRecord(time: nil, operation: .removeDevice(["d1", "unknown"]))))
        #expect(engine.status(ofDevice: "d1") == nil)
        // The next reading is a first reading: older than the forgotten last one yet not stale,
        // silent (initial silent), and `once` may notify again.
        for reading in [F.fix(15, east: 300), F.fix(30, east: 0)] { events += engine.process(reading) }
        events += engine.finish()
        #expect(
            events.map(Self.label) == [
                "gate.enter/d1@10:observed#1", "once.enter/d1@10:observed#1", "gate.exit/d1@20:removed#1:10s",
                "gate.enter/d1@30:observed#2", "once.enter/d1@30:observed#2",
            ])
        #expect(engine.statistics.stale == 0)
    }

    @Test func aSilentDeviceIsForgottenAfterItsTimeToLive() throws {
        // d2 speaks exactly at its due time and is kept; d1 falls silent and exits at 10 + 60.
        let events = try Self.run(
            [F.circle(hysteresis: .naive)],
            [
                F.fix("d1", 0, east: 300), F.fix("d2", 0, east: 0), F.fix("d1", 10, east: 0), F.fix("d2", 60, east: 0),
                F.fix("d2", 115, east: 0), F.fix("d2", 170, east: 300),
            ], ttl: 60)
        #expect(
            events == [
                "gate.enter/d1@10:observed#1", "gate.exit/d1@70:expired#1:60s", "gate.exit/d2@170:observed#1:170s",
            ])
    }

    @Test func aCheckpointKeepsExpiriesAndTimesToLive() throws {
        var request = F.circle(hysteresis: .naive)
        request.expires = F.at(500)
        let configuration = Engine.Configuration(deviceTTL: TimeSpan(seconds: 60))
        let first = [F.fix("a", 0, east: 0), F.fix("b", 0, east: 0), F.fix("a", 50, east: 0)]
        let second = [F.fix("b", 80, east: 0), F.fix("b", 130, east: 0), F.fix("b", 600, east: 0)]
        var engine = try Engine(catalog: Catalog(requests: [request]), configuration: configuration)
        var cut: [Event] = []
        for reading in first { cut += engine.process(reading) }
        cut += engine.finish()
        engine = try Engine(resuming: engine.checkpoint(), configuration: configuration)
        for reading in second { cut += engine.process(reading) }
        cut += engine.finish()
        let whole = try F.run([request], first + second, configuration: configuration)
        #expect(cut.map(Self.label) == whole.map(Self.label))
        #expect(
            whole.map(Self.label) == [
                "gate.exit/b@60:expired#1:60s", "gate.exit/a@110:expired#1:110s", "gate.exit/b@190:expired#2:110s",
            ])
    }

    /// A catalog whose request expired before the first reading, and an add record naming an
    /// expires the clock has passed: the request leaves pending as it is added, and the readings
    /// of that instant do not evaluate it (no initial enter, no expired exit before it).
    @Test func aRequestAddedWithItsExpiresPassedIsNeverEvaluated() throws {
        var request = F.circle("late", hysteresis: .naive) { $0.initial = .enter }
        request.expires = F.at(5)
        #expect(try Self.run([request], [F.fix(10, east: 0), F.fix(20, east: 0)]) == [])
        let engine = try Engine(catalog: Catalog())
        var events = engine.process(F.fix(10, east: 300))
        request.expires = F.at(15)
        events += engine.process(.control(ControlRecord(time: F.at(20), operation: .add(request))))
        events += engine.process(F.fix(20, east: 0))
        events += engine.process(F.fix(30, east: 0))
        events += engine.finish()
        #expect(events.map(Self.label) == [])
        #expect(engine.pendingRequestIDs.isEmpty)
    }

    /// `nextTriggerDate` (`GET /v1/requests`, `fenceline next`) gives no date past a request's
    /// `expires`; one due at that very instant is given, and fires (the instant's timers come
    /// before the expiry).
    @Test func noNextTriggerDateComesAfterTheExpiry() throws {
        func timer(_ id: String, every seconds: Double) -> NotificationRequest {
            var request = NotificationRequest(
                id: id, trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: seconds), repeats: true))
            )
            request.expires = F.at(100)
            return request
        }
        let engine = try Engine(catalog: Catalog(requests: [timer("late", every: 200), timer("last", every: 90)]))
        var events = engine.advance(to: F.at(10))
        #expect(engine.nextTriggerDate(forRequest: "late") == nil)
        #expect(engine.nextTriggerDate(forRequest: "last") == F.at(100))
        #expect(engine.pendingRequestIDs == ["last"], "one that cannot fire by its expires is not pending")
        #expect(engine.pendingRequestCount == 1)
        events += engine.advance(to: F.at(300))
        #expect(events.map(\.requestID) == ["last"] && events.first?.time == F.at(100))
    }

    /// Added through the library with its expires long passed: nothing fires, nothing is pending.
    @Test func aRequestAddedAlreadyExpiredFiresNothing() throws {
        var request = F.circle("late", hysteresis: .naive) { $0.initial = .enter }
        request.expires = F.at(-100)
        let engine = try Engine(catalog: Catalog())
        var events = engine.process(F.fix(0, east: 0))
        try engine.add(request)
        events += engine.process(F.fix(10, east: 0))
        events += engine.process(F.fix(20, east: 0))
        events += engine.finish()
        #expect(events.map(Self.label) == [])
        #expect(engine.pendingRequestIDs.isEmpty)
    }
}
