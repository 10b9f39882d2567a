import Foundation
import TestSupport
import Testing

@testable import Fenceline

/// SPEC §12 "Device proximity": pairs of devices entering within `near`, exiting beyond `far` or
/// when a fix ages past `maxAge`, found through the grid of last positions.
@Suite struct ProximityTests {
    typealias F = Fixtures

    static func request(
        _ id: String = "meet", near: Double = 50, far: Double? = 75, among: [String] = ["tag-*"],
        to: [String]? = ["truck-*"], maxAge: Double? = nil, devices: [String]? = nil,
        configure: (inout ProximityTrigger) -> Void = { _ in }
    ) -> NotificationRequest {
        var trigger = ProximityTrigger(
            near: near, far: far, among: among.map(DevicePattern.init), to: to?.map(DevicePattern.init),
            maxAge: maxAge.map { TimeSpan(seconds: $0) })
        configure(&trigger)
        return NotificationRequest(
            id: id, content: NotificationContent(body: "{device} and {other}"), trigger: .proximity(trigger),
            devices: devices)
    }

    /// `kind device/other@seconds reason`.
    static func label(_ event: Event) -> String {
        "\(F.label(event)) \(event.device ?? "-")/\(event.other ?? "-") \(event.reason?.rawValue ?? "-")"
    }

    @Test func entersAtNearExitsBeyondFarAndTheBandChangesNothing() throws {
        let events = try F.run(
            [Self.request()],
            [
                F.fix("tag-1", 0, east: 0), F.fix("truck-1", 0, east: 120),
                F.fix("truck-1", 10, east: 49.999_999),  // at near (as close as the sphere's rounding allows)
                F.fix("truck-1", 20, east: 74.999_999),  // at far: still inside
                F.fix("truck-1", 30, east: 30),
                F.fix("truck-1", 40, east: 76),  // beyond far
                F.fix("truck-1", 50, east: 60),  // the band: no enter
            ])
        #expect(events.map(Self.label) == ["enter@10 tag-1/truck-1 observed", "exit@40 tag-1/truck-1 observed"])
        let enter = events[0]
        #expect(abs(enter.distance! - 50) < 1e-5)
        #expect(enter.position?.coordinate == F.offset(east: 0))
        #expect(enter.content.body == "tag-1 and truck-1")
        #expect(events[1].visitID == "meet/tag-1/1" && events[1].duration == TimeSpan(seconds: 30))
    }

    @Test func theDeviceIsTheOneMatchingAmongWhicheverReports() throws {
        // The tag reports last, so its fix finds the truck in the grid: still device tag, other truck.
        let events = try F.run(
            [Self.request()], [F.fix("truck-9", 0, east: 10), F.fix("tag-1", 5, east: 0), F.fix("tag-1", 9, east: 200)])
        #expect(events.map(Self.label) == ["enter@5 tag-1/truck-9 observed", "exit@9 tag-1/truck-9 observed"])
    }

    @Test func devicesMatchingBothListsPairOnceInByteOrder() throws {
        let request = Self.request(among: ["car-*"], to: nil)
        let events = try F.run(
            [request],
            [F.fix("car-b", 0, east: 0), F.fix("car-a", 1, east: 10), F.fix("car-c", 2, east: 400)])
        #expect(events.map(Self.label) == ["enter@1 car-a/car-b observed"])
    }

    @Test func aDeviceNeverPairsWithItselfNorWithDevicesOutOfScopeOrLists() throws {
        let request = Self.request(among: ["*"], to: nil, devices: ["a", "b", "c"])
        let events = try F.run(
            [request],
            [
                F.fix("a", 0, east: 0), F.fix("a", 1, east: 1),  // itself
                F.fix("z", 2, east: 0),  // matches `*` but is not in the request's devices
                F.fix("b", 3, east: 400), F.fix("c", 4, east: 5),
            ])
        #expect(events.map(Self.label) == ["enter@4 a/c observed"])
    }

    @Test func visitsCountPerDeviceOverAllItsPairsInNameOrder() throws {
        // truck-2 and truck-1 come near the tag at the same fix: visits follow the others' names.
        let events = try F.run(
            [Self.request()],
            [
                F.fix("truck-2", 0, east: 10), F.fix("truck-1", 0, east: -10), F.fix("tag-1", 1, east: 0),
                F.fix("tag-1", 10, east: 500),
            ])
        #expect(
            events.map { "\($0.kind.rawValue) \($0.other!) \($0.visitID!)" } == [
                "enter truck-1 meet/tag-1/1", "enter truck-2 meet/tag-1/2", "exit truck-1 meet/tag-1/1",
                "exit truck-2 meet/tag-1/2",
            ])
    }

    @Test func delaysNeedTheConditionThroughoutAndABandFixCancelsThem() throws {
        let request = Self.request {
            $0.enterDelay = TimeSpan(seconds: 20)
            $0.exitDelay = TimeSpan(seconds: 20)
        }
        let events = try F.run(
            [request],
            [
                F.fix("tag-1", 0, east: 0), F.fix("truck-1", 0, east: 20),
                F.fix("truck-1", 10, east: 60),  // the band cancels the enter candidate
                F.fix("truck-1", 15, east: 10),  // a new streak from 15
                F.fix("truck-1", 40, east: 10),
                F.fix("truck-1", 50, east: 100),  // exit streak from 50…
                F.fix("truck-1", 60, east: 70),  // …cancelled by the band
                F.fix("truck-1", 70, east: 100), F.fix("truck-1", 95, east: 100),
            ])
        #expect(events.map(Self.label) == ["enter@35 tag-1/truck-1 delayed", "exit@90 tag-1/truck-1 delayed"])
        #expect(events[0].since == F.at(15) && events[1].since == F.at(70))
    }

    @Test func aPairAgesOutWhenTheOlderFixPassesMaxAge() throws {
        let events = try F.run(
            [Self.request(maxAge: 30)],
            [
                F.fix("tag-1", 0, east: 0), F.fix("truck-1", 10, east: 10),
                F.fix("truck-1", 25, east: 10),
                F.fix("tag-1", 30, east: 0),  // exactly at 0 + 30: keeps the pair, its limit is now 55
                F.fix("truck-1", 80, east: 10),  // the clock passes 55 first: the pair ages out there
            ])
        #expect(events.map(Self.label) == ["enter@10 tag-1/truck-1 observed", "exit@55 tag-1/truck-1 timeout"])
        #expect(events[1].since == F.at(25) && events[1].duration == TimeSpan(seconds: 45))
    }

    @Test func fixesTooFarApartInTimeDoNotEnter() throws {
        let events = try F.run(
            [Self.request(maxAge: 30)],
            [F.fix("tag-1", 0, east: 0), F.fix("truck-1", 31, east: 10), F.fix("tag-1", 40, east: 0)])
        #expect(events.map(Self.label) == ["enter@40 tag-1/truck-1 observed"])
    }

    @Test func anEnterDelayDuringWhichAFixAgesOutIsCancelled() throws {
        let request = Self.request(maxAge: 10) { $0.enterDelay = TimeSpan(seconds: 30) }
        let events = try F.run(
            [request], [F.fix("tag-1", 0, east: 0), F.fix("truck-1", 5, east: 10), F.fix("truck-1", 60, east: 500)])
        #expect(events.isEmpty)
    }

    @Test func anEnterDelayRestartsWhenAFixAgedOutBetweenEvaluations() throws {
        // Every evaluation finds the two fixes at most 10 s apart, but B's fix of 0 s aged out at
        // 10 s, before A's of 9 s was joined by B's of 18 s: the delay starts again each time.
        let request = Self.request(maxAge: 10) { $0.enterDelay = TimeSpan(seconds: 30) }
        let readings = [(0, "tag-1"), (0, "truck-1"), (9, "tag-1"), (18, "truck-1"), (27, "tag-1"), (29, "truck-1")]
            .map { F.fix($0.1, Double($0.0), east: $0.1 == "tag-1" ? 0 : 10) }
        #expect(try F.run([request], readings, until: F.at(100)).isEmpty)
        // Without the age limit the same fixes enter when the delay ends.
        let unlimited = Self.request { $0.enterDelay = TimeSpan(seconds: 30) }
        #expect(
            try F.run([unlimited], readings, until: F.at(100)).map(Self.label) == ["enter@30 tag-1/truck-1 delayed"])
    }

    @Test func fixesExactlyMaxAgeApartEnterAndAgeOutAtOnce() throws {
        // Both rules of SPEC §12 at their boundary: the enter holds (at most maxAge apart), and
        // the older fix is then exactly at its limit; the instant's exit leaves first (SPEC §4).
        let events = try F.run(
            [Self.request(maxAge: 60)], [F.fix("tag-1", 0, east: 0), F.fix("truck-1", 60, east: 10)])
        #expect(events.map(Self.label) == ["exit@60 tag-1/truck-1 timeout", "enter@60 tag-1/truck-1 observed"])
    }

    @Test func anyNearCoversTheWholeEarth() throws {
        let request = Self.request(near: 1e27, far: 1e28, among: ["*"], to: nil)
        let events = try F.run(
            [request],
            [
                F.fix("a", 0, Coordinate(latitude: 89.9, longitude: 179)),
                F.fix("b", 1, Coordinate(latitude: -89.9, longitude: -179)), F.fix("c", 2, east: 0),
            ])
        #expect(events.map(Self.label) == ["enter@1 a/b observed", "enter@2 a/c observed", "enter@2 b/c observed"])
    }

    @Test func aDeviceTooOldToPairLeavesTheGridUntilItReports() throws {
        let engine = try Engine(catalog: Catalog(requests: [Self.request(maxAge: 10)]))
        var events: [Event] = []
        for reading in [F.fix("tag-1", 0, east: 0), F.fix("truck-1", 20, east: 10)] {
            events += engine.process(reading)
        }
        let state = engine.proximity[0].state
        #expect(state.cells.count == 1 && state.members.filter(\.inGrid).count == 1)
        for reading in [F.fix("tag-1", 25, east: 0), F.fix("tag-1", 30, east: 0)] { events += engine.process(reading) }
        events += engine.finish()
        // The truck's fix of 20 s reaches its limit at 30 s, when the input ends.
        #expect(events.map(Self.label) == ["enter@25 tag-1/truck-1 observed", "exit@30 tag-1/truck-1 timeout"])
        #expect(state.members.filter(\.inGrid).count == 2)
    }

    @Test func repeatsFalseIsUsedUpPerPair() throws {
        let request = Self.request { $0.repeats = false }
        let events = try F.run(
            [request],
            [
                F.fix("tag-1", 0, east: 0), F.fix("truck-1", 1, east: 10), F.fix("truck-1", 2, east: 300),
                F.fix("truck-1", 3, east: 10), F.fix("truck-2", 4, east: 10),
            ])
        #expect(events.map(Self.label) == ["enter@1 tag-1/truck-1 observed", "enter@4 tag-1/truck-2 observed"])
        // Used-up pairs are kept apart, out of every fix's way.
        let engine = try Engine(catalog: Catalog(requests: [request]))
        for reading in [F.fix("tag-1", 0, east: 0), F.fix("truck-1", 1, east: 10), F.fix("truck-1", 2, east: 300)] {
            _ = engine.process(reading)
        }
        let state = engine.proximity[0].state
        #expect(state.pairs.isEmpty && state.partners.isEmpty && state.done.count == 1)
    }

    @Test func aScheduleMutesWithoutUsingUp() throws {
        var request = Self.request { $0.repeats = false }
        // Open from 08:01 UTC on the day of t0 (a Monday).
        request.schedule = Schedule(
            timeZone: "UTC", windows: [Schedule.Window(days: [2], start: 8 * 60 + 1, end: 9 * 60)])
        let events = try F.run(
            [request],
            [
                F.fix("tag-1", 0, east: 0), F.fix("truck-1", 1, east: 10), F.fix("truck-1", 2, east: 300),
                F.fix("truck-1", 61, east: 10),
            ])
        #expect(events.map(Self.label) == ["enter@61 tag-1/truck-1 observed"])
    }

    @Test func forgettingADeviceExitsItsPairsAndFreesThem() throws {
        let engine = try Engine(
            catalog: Catalog(requests: [Self.request()]),
            configuration: Engine.Configuration(deviceTTL: TimeSpan(seconds: 60)))
        var events: [Event] = []
        for reading in [F.fix("tag-1", 0, east: 0), F.fix("truck-1", 5, east: 10)] {
            events += engine.process(reading)
        }
        events += engine.process(.control(ControlRecord(time: F.at(10), operation: .removeDevice(["truck-1"]))))
        for reading in [F.fix("tag-1", 20, east: 0), F.fix("truck-1", 30, east: 10)] {
            events += engine.process(reading)
        }
        events += engine.finish(until: F.at(200))
        #expect(
            events.map(Self.label) == [
                "enter@5 tag-1/truck-1 observed", "exit@10 tag-1/truck-1 removed", "enter@30 tag-1/truck-1 observed",
                // The tag's last reading was at 20: silent past 80, it is forgotten there.
                "exit@80 tag-1/truck-1 expired",
            ])
        #expect(events.map(\.visit) == [1, 1, 2, 2])
        let state = engine.proximity[0].state
        #expect(state.pairs.isEmpty && state.cells.count == 0)
    }

    @Test func anExpiringRequestExitsEveryInsidePair() throws {
        var request = Self.request()
        request.expires = F.at(50)
        let events = try F.run(
            [request],
            [
                F.fix("tag-1", 0, east: 0), F.fix("truck-1", 1, east: 10), F.fix("tag-2", 2, east: 20),
                F.fix("truck-1", 60, east: 10),
            ])
        #expect(
            events.map(Self.label) == [
                "enter@1 tag-1/truck-1 observed", "enter@2 tag-2/truck-1 observed", "exit@50 tag-1/truck-1 expired",
                "exit@50 tag-2/truck-1 expired",
            ])
    }

    @Test func aFilteredFixIsNotEvaluatedAndARefreshKeepsTheOldPosition() throws {
        var request = Self.request(maxAge: 30)
        request.filters = PositionFilters(maxSpeed: 50, minDistance: 5)
        let engine = try Engine(catalog: Catalog(requests: [request]))
        var events: [Event] = []
        for reading in [
            F.fix("tag-1", 0, east: 0), F.fix("truck-1", 0, east: 200),
            F.fix("truck-1", 1, east: 20),  // 180 m in 1 s: dropped
            F.fix("truck-1", 10, east: 197),  // 3 m from its reference: a refresh at 10
            F.fix("tag-1", 35, east: 0),  // a refresh too: its times 35 and 10 are more than 30 apart
        ] {
            events += engine.process(reading)
        }
        events += engine.finish()
        #expect(events.isEmpty)
        #expect(engine.statistics.filtered == 3)
        let members = engine.proximity[0].state.members.filter(\.hasFix)
        #expect(Set(members.map(\.time)) == [F.at(10), F.at(35)])
        #expect(Set(members.map(\.coordinate)) == [F.offset(east: 0), F.offset(east: 200)])
    }

    @Test func aCheckpointCutAnywhereGivesTheSameEvents() throws {
        var generator = SplitMix(state: 17)
        let request = Self.request(near: 40, far: 60, among: ["tag-*"], to: ["truck-*"], maxAge: 20) {
            $0.enterDelay = TimeSpan(seconds: 3)
            $0.exitDelay = TimeSpan(seconds: 2)
        }
        let readings = Self.randomWalk(devices: 12, steps: 40, spread: 150, generator: &generator)
        let whole = try F.run([request], readings)
        #expect(whole.count > 10)
        for cut in stride(from: 5, to: readings.count, by: 37) {
            let first = try Engine(catalog: Catalog(requests: [request]))
            var events: [Event] = []
            for reading in readings[..<cut] { events += first.process(reading) }
            let second = try Engine(resuming: first.checkpoint())
            for reading in readings[cut...] { events += second.process(reading) }
            events += second.finish()
            #expect(events == whole, "cut at \(cut)")
            #expect(second.checkpoint() == Self.resumed(second.checkpoint()), "cut at \(cut)")
        }
    }

    /// A checkpoint's bytes after a resume from them: the same when nothing is lost on the way.
    static func resumed(_ bytes: [UInt8]) -> [UInt8] {
        (try? Engine(resuming: bytes).checkpoint()) ?? []
    }

    /// Fixes of `devices` devices (half tags, half trucks) moving at random in a square `spread`
    /// metres across, in time order, some of them now and then silent.
    static func randomWalk(
        devices: Int, steps: Int, spread: Double, origin: Coordinate = F.center, generator: inout SplitMix
    ) -> [Reading] {
        var positions = (0..<devices).map { _ in
            (Double.random(in: 0...spread, using: &generator), Double.random(in: 0...spread, using: &generator))
        }
        var readings: [Reading] = []
        for step in 0..<steps {
            for device in 0..<devices where Double.random(in: 0...1, using: &generator) < 0.8 {
                positions[device].0 += Double.random(in: -15...15, using: &generator)
                positions[device].1 += Double.random(in: -15...15, using: &generator)
                let name = device % 2 == 0 ? "tag-\(device)" : "truck-\(device)"
                readings.append(
                    F.fix(
                        name, Double(step) * 2,
                        F.offset(origin, east: positions[device].0, north: positions[device].1)))
            }
        }
        return readings
    }
}

/// The grid against every pair: the engine's events equal those of a reference that checks all
/// pairs at every fix, anywhere on Earth (the poles, the antimeridian), and a query never misses
/// a device within its radius.
@Suite struct ProximityGridTests {
    typealias F = Fixtures

    /// What SPEC §12 says, the slow way: every fix looks at every other device. No delays.
    static func reference(
        _ readings: [Reading], near: Double, far: Double, maxAge: TimeSpan, end: Timestamp
    ) -> [String] {
        var last: [String: (Coordinate, Timestamp)] = [:]
        var inside: [String: (device: String, other: String)] = [:]
        var events: [(Timestamp, Int, String)] = []
        func ageOut(before time: Timestamp, inclusive: Bool) {
            while true {
                let due = inside.map { key, pair in
                    (key, min(last[pair.device]!.1, last[pair.other]!.1).advanced(by: maxAge))
                }.filter { inclusive ? $0.1 <= time : $0.1 < time }.min { ($0.1, $0.0) < ($1.1, $1.0) }
                guard let (key, at) = due else { return }
                let pair = inside.removeValue(forKey: key)!
                events.append((at, 0, "exit \(pair.device)/\(pair.other) timeout"))
            }
        }
        for reading in readings {
            guard case .fix(let fix) = reading else { continue }
            ageOut(before: fix.time, inclusive: false)
            last[fix.device] = (fix.coordinate, fix.time)
            for (name, value) in last where name != fix.device {
                let (device, other) =
                    fix.device.utf8.lexicographicallyPrecedes(name.utf8)
                    ? (fix.device, name) : (name, fix.device)
                let key = "\(device)/\(other)"
                let distance = fix.coordinate.distance(to: value.0)
                let apart = TimeSpan(microseconds: abs(fix.time.microseconds - value.1.microseconds))
                if inside[key] == nil, distance <= near, apart <= maxAge {
                    inside[key] = (device, other)
                    events.append((fix.time, 1, "enter \(key) observed"))
                } else if inside[key] != nil, distance > far {
                    inside[key] = nil
                    events.append((fix.time, 0, "exit \(key) observed"))
                }
            }
        }
        ageOut(before: end, inclusive: true)
        return events.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.map(\.2)
    }

    @Test(arguments: [
        ("Amsterdam", 52.37, 4.89), ("the antimeridian", -16.5, 179.9995), ("near the north pole", 89.9993, 30.0),
        ("the equator", 0.0, -0.0004), ("the south pole", -90.0, 0.0),
    ])
    func theGridFindsWhatCheckingEveryPairFinds(place: String, latitude: Double, longitude: Double) throws {
        var generator = SplitMix(state: UInt64(abs(latitude * 1000 + longitude)))
        let origin = Coordinate(latitude: latitude, longitude: longitude)
        let readings = ProximityTests.randomWalk(
            devices: 14, steps: 60, spread: 120, origin: origin, generator: &generator)
        let request = ProximityTests.request(near: 30, far: 45, among: ["*"], to: nil, maxAge: 6)
        let events = try F.run([request], readings)
        let end = readings.compactMap(\.time).max()!
        let expected = Self.reference(readings, near: 30, far: 45, maxAge: TimeSpan(seconds: 6), end: end)
        #expect(!expected.isEmpty, "\(place)")
        #expect(
            events.map { "\($0.kind.rawValue) \($0.device!)/\($0.other!) \($0.reason!.rawValue)" } == expected,
            "\(place)")
    }

    @Test func aQueryNeverMissesADeviceWithinItsRadius() {
        var generator = SplitMix(state: 5)
        for radius in [0.5, 30, 1_000, 250_000] {
            let state = ProximityState(
                trigger: ProximityTrigger(near: radius, among: [DevicePattern("*")]), filters: PositionFilters())
            var points: [Coordinate] = []
            for device in 0..<400 {
                // Clustered around places where the grid is at its edges, and anywhere.
                let centres = [(90.0, 0.0), (-90.0, 0.0), (10.0, 180.0), (-45.0, -180.0), (60.0, 25.0)]
                let centre = centres[device % centres.count]
                let spread = radius * 3 / Earth.metresPerDegree
                var latitude = centre.0 + Double.random(in: -spread...spread, using: &generator)
                latitude = max(-90, min(90, latitude))
                var longitude = centre.1 + Double.random(in: -spread...spread, using: &generator) * 5
                if longitude > 180 { longitude -= 360 }
                if longitude < -180 { longitude += 360 }
                if device % 7 == 0 {
                    latitude = Double.random(in: -90...90, using: &generator)
                    longitude = Double.random(in: -180...180, using: &generator)
                }
                let point = Coordinate(latitude: latitude, longitude: longitude)
                points.append(point)
                state.ensure(Int32(device))
                state.move(Int32(device), to: point, time: F.at(0))
            }
            for (index, point) in points.enumerated() {
                var found = Set<Int32>()
                state.forEachDevice(near: point) { found.insert($0) }
                for (other, candidate) in points.enumerated() where point.distance(to: candidate) <= radius {
                    #expect(found.contains(Int32(other)), "radius \(radius): \(index) misses \(other)")
                }
            }
        }
    }
}

/// The grid's hand-written hash table against a dictionary, through random sets and deletions
/// (deletion shifts entries back, which a wrong condition would lose).
@Suite struct CellTableTests {
    @Test func itHoldsWhatADictionaryHolds() {
        var generator = SplitMix(state: 11)
        let table = CellTable()
        var reference: [Int64: Int32] = [:]
        for step in 0..<40_000 {
            // Few distinct keys at first (long probe runs), then many; deletions as often as sets.
            let keys = step < 20_000 ? 40 : 5_000
            let key = Int64(Int.random(in: 0..<keys, using: &generator)) << 32 | Int64(step % 3)
            let head: Int32 = Bool.random(using: &generator) ? -1 : Int32(step)
            table.setHead(head, of: key)
            reference[key] = head < 0 ? nil : head
            if step % 997 == 0 || step == 39_999 {
                #expect(table.count == reference.count)
                #expect(table.contents == reference)
                for (key, head) in reference { #expect(table.head(of: key) == head) }
                #expect(table.head(of: Int64(keys + 1) << 32) == -1)
            }
        }
    }
}
