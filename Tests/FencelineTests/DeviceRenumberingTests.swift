import Foundation
import TestSupport
import Testing

@testable import Fenceline

/// SPEC §12 "forgetting frees all of a device's state": an engine drops the devices it holds
/// nothing of and renumbers the rest. That must change no event, no delivered notification, no
/// visit number and no device status, whenever it happens (at every chance, or never), and it
/// must survive checkpoints.
@Suite struct DeviceRenumberingTests {
    typealias F = Fixtures

    /// Fleets of tags and trucks around the default centre: region, scoped, non-repeating,
    /// dwelling and proximity requests, with a time to live and `removeDevice` records.
    static let requests: [NotificationRequest] = {
        var gate = F.circle("gate", radius: 150, hysteresis: .naive)
        gate.expires = F.at(700)
        let once = F.circle("once", radius: 80, hysteresis: .naive) { $0.repeats = false }
        let dwell = F.circle("dwell", radius: 200, hysteresis: .naive) {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 30)
        }
        let scoped = F.circle("scoped", radius: 300, hysteresis: .naive, devices: ["tag-3", "tag-7", "never-seen"])
        var meet = ProximityTrigger(
            near: 40, far: 60, among: [DevicePattern("tag-*")], to: [DevicePattern("truck-*")],
            maxAge: TimeSpan(seconds: 45))
        meet.enterDelay = TimeSpan(seconds: 5)
        let proximity = NotificationRequest(
            id: "meet", content: NotificationContent(body: "{device} met {other}"), trigger: .proximity(meet))
        return [gate, once, dwell, scoped, proximity]
    }()

    /// A random trace: devices come and go (some never come back, some do), with removals.
    static func readings(seed: UInt64, devices: Int, seconds: Int) -> [Reading] {
        var random = SplitMix(state: seed)
        var readings: [Reading] = []
        // Two spellings of one text, which the engine keeps apart as two devices (by bytes).
        let names = (0..<devices).map { $0 % 5 == 0 ? "truck-\($0)" : "tag-\($0)" } + ["caf\u{E9}", "cafe\u{301}"]
        for second in stride(from: 0, to: seconds, by: 5) {
            for name in names where Double.random(in: 0..<1, using: &random) < 0.15 {
                let east = Double.random(in: -400...400, using: &random)
                let north = Double.random(in: -400...400, using: &random)
                readings.append(
                    .fix(
                        Fix(
                            device: name, time: F.at(Double(second)), coordinate: F.offset(east: east, north: north),
                            accuracy: 5)))
            }
            if Double.random(in: 0..<1, using: &random) < 0.1 {
                let removed = (0..<3).map { _ in names[Int.random(in: 0..<names.count, using: &random)] }
                readings.append(.control(ControlRecord(time: F.at(Double(second)), operation: .removeDevice(removed))))
            }
        }
        return readings
    }

    static let configuration = Engine.Configuration(deliveredLimit: 4, deviceTTL: TimeSpan(seconds: 40))

    /// Everything the engine tells of its devices, as text: events, delivered notifications,
    /// device statuses.
    static func observe(_ engine: Engine, events: [Event], names: [String]) -> [String] {
        var lines = events.map { String(describing: $0) }
        for event in engine.deliveredNotifications {
            lines.append("delivered \(event.sequence) \(event.requestID) \(event.device ?? "-")")
        }
        for name in names { lines.append("status \(String(describing: engine.status(ofDevice: name)))") }
        lines.append("devices \(engine.deviceCount) \(engine.deviceNames.sorted())")
        return lines
    }

    static func run(_ readings: [Reading], renumberingMinimum: Int, cutEvery: Int? = nil) throws -> (
        observed: [String], events: [Event], engine: Engine
    ) {
        var engine = try Engine(catalog: Catalog(requests: requests), configuration: configuration)
        engine.renumberingMinimum = renumberingMinimum
        var events: [Event] = []
        for (index, reading) in readings.enumerated() {
            events += engine.process(reading)
            // A checkpoint closes the instant at the clock (SPEC §10), so cuts fall between instants.
            if let cutEvery, index % cutEvery == cutEvery - 1, index + 1 < readings.count,
                readings[index + 1].time != reading.time
            {
                events += engine.finish(keepingHeldReadings: true)
                engine = try Engine(resuming: engine.checkpoint(), configuration: configuration)
                engine.renumberingMinimum = renumberingMinimum
            }
        }
        events += engine.finish()
        let names = Set(
            readings.compactMap { reading -> String? in
                if case .fix(let fix) = reading { return fix.device }
                return nil
            }
        ).sorted()
        return (observe(engine, events: events, names: names), events, engine)
    }

    /// The first line where two observations differ, with its number; `nil` when they are the same.
    static func firstDifference(_ a: [String], _ b: [String]) -> String? {
        guard a != b else { return nil }
        let index = a.indices.first { $0 >= b.count || a[$0] != b[$0] } ?? a.count
        return
            "line \(index) of \(a.count)/\(b.count): \(index < a.count ? a[index] : "-") <> \(index < b.count ? b[index] : "-")"
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func renumberingAtEveryChanceChangesNothing(seed: UInt64) throws {
        let readings = Self.readings(seed: seed, devices: 60, seconds: 900)
        let never = try Self.run(readings, renumberingMinimum: .max)
        let always = try Self.run(readings, renumberingMinimum: 1)
        #expect(Self.firstDifference(always.observed, never.observed) == nil)
        #expect(never.events.contains { $0.kind == .exit && $0.reason == .expired })
        #expect(never.events.contains { $0.reason == .removed })
        #expect(never.events.contains { $0.other != nil && $0.reason != .observed })
        #expect(never.events.contains { $0.kind == .dwell })
        #expect(never.events.contains { $0.requestID == "scoped" })
        #expect(
            never.events.contains { $0.device == "cafe\u{301}" } && never.events.contains { $0.device == "caf\u{E9}" })
        // Renumbering really dropped devices (fewer numbers than names ever read).
        #expect(always.engine.devices.count < never.engine.devices.count)
        #expect(!always.engine.forgottenVisits.isEmpty)
    }

    @Test(arguments: [3, 7] as [Int])
    func renumberingSurvivesCheckpoints(cutEvery: Int) throws {
        let readings = Self.readings(seed: 4, devices: 40, seconds: 600)
        let whole = try Self.run(readings, renumberingMinimum: .max)
        let cut = try Self.run(readings, renumberingMinimum: 1, cutEvery: cutEvery)
        #expect(Self.firstDifference(cut.observed, whole.observed) == nil)
    }

    @Test func aCheckpointListsForgottenDevicesForTheirVisitCountersOnly() throws {
        let engine = try Engine(catalog: Catalog(requests: [F.circle(hysteresis: .naive)]))
        engine.renumberingMinimum = 1
        for reading in [F.fix("a", 0, east: 500), F.fix("b", 0, east: 500), F.fix("a", 5, east: 0)] {
            _ = engine.process(reading)
        }
        _ = engine.process(.control(ControlRecord(time: F.at(10), operation: .removeDevice(["a", "b"]))))
        _ = engine.finish()
        // Both dropped; only a has a visit counter, so only a is listed in a checkpoint.
        #expect(engine.devices.count == 0 && engine.deviceCount == 0)
        let state = engine.checkpoint()
        let resumed = try Engine(resuming: state)
        #expect(resumed.devices.names == ["a"] && resumed.deviceCount == 0)
        #expect(try Engine(resuming: state).checkpoint() == state)
        resumed.renumberingMinimum = 1
        var events: [Event] = []
        for reading in [F.fix("a", 20, east: 500), F.fix("a", 30, east: 0)] { events += resumed.process(reading) }
        events += resumed.finish()
        #expect(events.map { "\($0.kind.rawValue) \($0.visit ?? 0)" } == ["enter 2"])
    }

    @Test func forgettingDropsTheDevicesDeliveredNotifications() throws {
        let engine = try Engine(catalog: Catalog(requests: [F.circle(hysteresis: .naive)]))
        for reading in [
            F.fix("a", 0, east: 500), F.fix("b", 0, east: 500), F.fix("a", 5, east: 0), F.fix("b", 5, east: 0),
        ] {
            _ = engine.process(reading)
        }
        _ = engine.process(.control(ControlRecord(time: F.at(10), operation: .removeDevice(["a"]))))
        _ = engine.finish()
        // a's enter and the exit forgetting gave it are gone with it; b's enter stays.
        #expect(engine.deliveredNotifications.map { "\($0.kind.rawValue) \($0.device ?? "-")" } == ["enter b"])
        #expect(throws: ResponseRefusal.self) {
            try engine.respond(NotificationResponse(target: .latest(request: "gate", device: "a"), action: "default"))
        }
    }
}
