import Foundation
import TestSupport
import Testing

@testable import Fenceline

/// A device's safe disc lets fixes skip the index and the fences it is not near, and a tracked
/// pair's certificate lets fixes skip measuring (and reading) its fence; neither may ever change
/// an event. The same random streams run with and without both and must agree exactly.
@Suite struct SafeDiscTests {
    /// Circles, polygons with holes, a corridor, a cushion that enters before the fence, the
    /// conservative mode, an accuracy limit, a device scope, and delays, over a few hundred metres.
    static func catalog(_ generator: inout SplitMix) -> [NotificationRequest] {
        // A naive fence a device hovers at the edge of (see `readings`): every fix may cross it.
        var requests = [Fixtures.circle("edge", radius: 100, hysteresis: .naive)]
        for index in 0..<40 {
            let center = Fixtures.offset(
                east: Double.random(in: -600...600, using: &generator),
                north: Double.random(in: -600...600, using: &generator))
            var hysteresis: Hysteresis = index.isMultiple(of: 5) ? .naive : .default
            switch index % 7 {
            case 1:
                hysteresis.enterCushion = -30  // enters 30 m before the fence
                hysteresis.exitCushion = 45
            case 2: hysteresis.accuracy = .conservative
            case 3: hysteresis.maxAccuracy = 25
            case 4: hysteresis.enterDelay = TimeSpan(seconds: 4)
            case 5:
                hysteresis.minFixes = 3
                hysteresis.exitDelay = index.isMultiple(of: 2) ? .zero : TimeSpan(seconds: 5)
            default: break
            }
            let geometry: RegionGeometry
            switch index % 3 {
            case 0:
                geometry = .circle(center: center, radius: Double.random(in: 20...150, using: &generator))
            case 1:
                let outer = Self.ring(
                    around: center, radius: Double.random(in: 60...200, using: &generator), &generator)
                let hole = Self.ring(around: center, radius: 15, &generator)
                geometry = .polygons([[outer, hole.reversed()]])
            default:
                geometry = .corridor(
                    path: [center, Fixtures.offset(center, east: 300, north: 80)], width: 20)
            }
            var trigger = RegionTrigger(geometry: geometry, hysteresis: hysteresis)
            trigger.notifyOnDwell = index.isMultiple(of: 4)
            trigger.dwell = TimeSpan(seconds: 20)
            requests.append(
                NotificationRequest(
                    id: "f\(index)", trigger: .region(trigger), devices: index == 6 ? ["w1", "w3"] : nil))
        }
        return requests
    }

    /// A star-ish ring of 12 vertices with radii between half and all of `radius` metres.
    static func ring(around center: Coordinate, radius: Double, _ generator: inout SplitMix) -> [Coordinate] {
        var points = (0..<12).map { step -> Coordinate in
            let angle = Double(step) / 12 * 2 * .pi
            let r = radius * (step.isMultiple(of: 2) ? 1 : Double.random(in: 0.5...0.9, using: &generator))
            return Fixtures.offset(center, east: r * cos(angle), north: r * sin(angle))
        }
        points.append(points[0])
        return points
    }

    /// Walkers, bikes and cars with GPS noise and now and then a poor accuracy, interleaved by
    /// time, with requests added and removed on the way.
    static func readings(_ generator: inout SplitMix) -> [Reading] {
        var readings: [Reading] = []
        let speeds = [1.4, 5, 13, 1.4, 5, 0.3]
        var positions = speeds.map { _ in
            (Double.random(in: -700...700, using: &generator), Double.random(in: -700...700, using: &generator))
        }
        var headings = speeds.map { _ in Double.random(in: 0..<(2 * .pi), using: &generator) }
        for second in 0..<1500 {
            for device in speeds.indices {
                headings[device] += Double.random(in: -0.26...0.26, using: &generator)
                positions[device].0 += speeds[device] * cos(headings[device])
                positions[device].1 += speeds[device] * sin(headings[device])
                if abs(positions[device].0) > 800 || abs(positions[device].1) > 800 { headings[device] += .pi }
                let noise = Double.random(in: 0...6, using: &generator)
                let accuracy = Double.random(in: 0...1, using: &generator) < 0.05 ? 40.0 : 3 + noise
                let point = Fixtures.offset(
                    east: positions[device].0 + Double.random(in: -noise...noise, using: &generator),
                    north: positions[device].1 + Double.random(in: -noise...noise, using: &generator))
                readings.append(Fixtures.fix("w\(device)", Double(second), point, accuracy: accuracy))
            }
            readings.append(
                Fixtures.fix("hover", Double(second), east: 100 + Double.random(in: -4...4, using: &generator)))
            if second == 500 {
                let request = NotificationRequest(
                    id: "late", trigger: .region(RegionTrigger(geometry: .circle(center: Fixtures.center, radius: 250)))
                )
                readings.append(.control(ControlRecord(time: Fixtures.at(Double(second)), operation: .add(request))))
            }
            if second == 900 {
                readings.append(
                    .control(ControlRecord(time: Fixtures.at(Double(second)), operation: .removePending(["f3", "f4"]))))
            }
            if second % 250 == 100 {
                // Time requests come and go (and replace a fence): only region ones void discs.
                let id = second % 500 == 100 ? "tick" : "f7"
                let request = NotificationRequest(
                    id: id, trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 30))))
                readings.append(.control(ControlRecord(time: Fixtures.at(Double(second)), operation: .add(request))))
            }
        }
        return readings
    }

    static func run(_ requests: [NotificationRequest], _ readings: [Reading], shortcuts: Bool) throws -> [Event] {
        let engine = try Engine(catalog: Catalog(requests: requests))
        engine.usesSafeDiscs = shortcuts
        engine.usesCertificates = shortcuts
        var events: [Event] = []
        for reading in readings { events += engine.process(reading) }
        return events + engine.finish()
    }

    @Test(arguments: Array(1...40) as [UInt64])
    func discsAndCertificatesChangeNoEvent(seed: UInt64) throws {
        var generator = SplitMix(state: seed)
        let requests = Self.catalog(&generator)
        let readings = Self.readings(&generator)
        let plain = try Self.run(requests, readings, shortcuts: false)
        let fast = try Self.run(requests, readings, shortcuts: true)
        #expect(plain.count > 100)
        #expect(fast == plain)
    }

    @Test func discsAreUsed() throws {
        // A device away from every fence gets a disc (bounded by the index cell it is in); a
        // request added voids it.
        let engine = try Engine(catalog: Catalog(requests: [Fixtures.circle(radius: 50)]))
        _ = engine.process(Fixtures.fix(0, east: 400))
        let disc = engine.devices.fixStates[0].disc
        #expect(disc.radius > 5)
        #expect(disc.epoch == engine.requestEpoch)
        #expect(disc.holds(Fixtures.offset(east: 401)))
        #expect(!disc.holds(Fixtures.offset(east: 60)))
        _ = engine.process(
            .control(ControlRecord(time: Fixtures.at(1), operation: .add(Fixtures.circle("more", radius: 10)))))
        #expect(engine.devices.fixStates[0].disc.epoch != engine.requestEpoch)
    }

    /// Beside a polygon whose box holds it, a device's disc reaches well past the polygon's
    /// thresholds: its margin is measured 60 m beyond them (it was a metre, which kept such discs
    /// to about 21 m and sent the next fix back to the index).
    @Test func discsBesideAPolygonReachPastItsThresholds() throws {
        // An L: a 400 m square without its north-east quarter; the device in that notch, 100 m
        // from both inner edges, is outside but within the polygon's box.
        let corners = [(-200.0, -200.0), (200, -200), (200, 0), (0, 0), (0, 200), (-200, 200), (-200, -200)]
        let ring = corners.map { Fixtures.offset(east: $0.0, north: $0.1) }
        let request = NotificationRequest(
            id: "l", trigger: .region(RegionTrigger(geometry: .polygons([[ring]]), hysteresis: .default)))
        let engine = try Engine(catalog: Catalog(requests: [request]))
        _ = engine.process(
            .fix(Fix(device: "d1", time: Fixtures.at(0), coordinate: Fixtures.offset(east: 100, north: 100))))
        #expect(engine.devices.records[0].isEmpty)
        #expect(engine.devices.fixStates[0].disc.radius > 40)
    }

    /// A device whose records all settle with nothing pending gets a settled disc inside their
    /// certificates: a fix within it reads none of them (the record keeps its last position),
    /// one beyond it steps them again, and a new record or another request epoch voids it.
    @Test func settledDiscsSkipQuietRecords() throws {
        let engine = try Engine(catalog: Catalog(requests: [Fixtures.circle(radius: 500)]))
        // Inside: the record, then its certificate, then a settled step that sets the disc.
        for second in 0..<3 { _ = engine.process(Fixtures.fix(Double(second), east: Double(second))) }
        let settled = engine.devices.fixStates[0].settled
        #expect(settled.radius > 50)
        #expect(settled.epoch == engine.requestEpoch)
        let record = try #require(engine.devices.records[0].first)
        #expect(record.safe.radiusWithin(around: settled.center) >= settled.radius)
        _ = engine.process(Fixtures.fix(3, east: 5))
        #expect(engine.devices.records[0][0].lastPosition == record.lastPosition)
        // Past the exit cushion (an exit streak starts): beyond the disc, the record is stepped.
        #expect(!settled.holds(Fixtures.offset(east: 530)))
        _ = engine.process(Fixtures.fix(4, east: 530))
        #expect(engine.devices.records[0][0].lastPosition.coordinate == Fixtures.offset(east: 530))
        #expect(engine.devices.fixStates[0].settled.radius == 0)
        // Back inside, a fresh disc; then a second fence: its new record voids the disc.
        for second in 5..<8 { _ = engine.process(Fixtures.fix(Double(second), east: 0)) }
        #expect(engine.devices.fixStates[0].settled.radius > 0)
        let inner = Fixtures.circle("inner", radius: 30)
        _ = engine.process(.control(ControlRecord(time: Fixtures.at(8), operation: .add(inner))))
        #expect(engine.devices.fixStates[0].settled.epoch != engine.requestEpoch)
        _ = engine.process(Fixtures.fix(9, east: 0))
        #expect(engine.devices.records[0].count == 2)
        #expect(engine.devices.fixStates[0].settled.radius == 0)
    }

    /// A disc of `radiusWithin(around:)` a point, in the point's own projection, lies within the
    /// disc it was taken from: every point it holds, that one holds too (latitudes up to 80°,
    /// discs up to a kilometre, across ±180°).
    @Test func discsWithinDiscsHoldNothingMore() {
        var generator = SplitMix(state: 9)
        var checked = 0
        for _ in 0..<2000 {
            let latitude = Double.random(in: -80...80, using: &generator)
            let longitude = Bool.random(using: &generator) ? 179.999 : Double.random(in: -180...180, using: &generator)
            let center = Coordinate(latitude: latitude, longitude: longitude)
            let outer = DeviceTable.SafeDisc(
                center: center, radius: Double.random(in: 2...1000, using: &generator), epoch: 1)
            let offset = outer.radius * Double.random(in: 0...0.6, using: &generator)
            let point = Fixtures.offset(
                center, east: offset * Double.random(in: -1...1, using: &generator), north: offset * 0.5)
            let radius = outer.radiusWithin(around: point)
            guard radius > 0 else { continue }
            let inner = DeviceTable.SafeDisc(center: point, radius: radius, epoch: 1)
            for step in 0..<16 {
                // Points just inside the inner disc's edge, all round.
                let angle = Double(step) / 16 * 2 * .pi
                let edge = Fixtures.offset(point, east: radius * 0.99 * sin(angle), north: radius * 0.99 * cos(angle))
                if inner.holds(edge) {
                    #expect(outer.holds(edge))
                    checked += 1
                }
            }
        }
        #expect(checked > 10_000)
    }

    @Test func onlyRegionRequestsVoidDiscs() throws {
        let engine = try Engine(catalog: Catalog(requests: [Fixtures.circle(radius: 50)]))
        _ = engine.process(Fixtures.fix(0, east: 400))
        let epoch = engine.requestEpoch
        let timed = NotificationRequest(
            id: "timed", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 60))))
        let beacon = NotificationRequest(
            id: "beacon", trigger: .beacon(BeaconTrigger(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")))
        for operation in [ControlRecord.Operation.add(timed), .add(beacon), .removePending(["timed", "beacon"])] {
            _ = engine.process(.control(ControlRecord(time: Fixtures.at(1), operation: operation)))
        }
        #expect(engine.requestEpoch == epoch)
        #expect(engine.devices.fixStates[0].disc.epoch == engine.requestEpoch)
        _ = engine.process(.control(ControlRecord(time: Fixtures.at(2), operation: .removePending(["gate"]))))
        #expect(engine.requestEpoch != epoch)
    }

    /// An engine with one circle of `radius` at the origin, its device's fix at the centre at 0 s
    /// and one `east` metres out at `second`, and that device's record for the circle.
    static func trackedRecord(radius: Double, thenEast east: Double, at second: Double) throws -> (
        Engine, DeviceTable.RegionRecord
    ) {
        let engine = try Engine(catalog: Catalog(requests: [Fixtures.circle(radius: radius)]))
        _ = engine.process(Fixtures.fix(0, east: 0))
        _ = engine.process(Fixtures.fix(second, east: east))
        return (engine, try #require(engine.devices.records[0].first))
    }

    @Test func certificatesSettleFixesDeepInside() throws {
        // Inside a 200 m circle (exit cushion 20 m), 100 m from its edge: the record's certificate
        // covers about 119 m around the fix, so a fix 30 m on settles without a measurement, and
        // its position is still the one timer-fired events will report.
        let (engine, record) = try Self.trackedRecord(radius: 200, thenEast: 100, at: 1)
        #expect(record.machine.isInside)
        #expect(abs(record.safe.radius - 119) < 0.5)
        #expect(record.safe.epoch == engine.requestEpoch)
        var stepped = record
        let position = Position(coordinate: Fixtures.offset(east: 130), accuracy: 5)
        let settled = stepped.stepSettled(position, at: Fixtures.at(2), accuracy: 5, epoch: engine.requestEpoch)
        #expect(settled)
        #expect(stepped.lastPosition == position)
        // Beyond the certificate, in another epoch or past the request's accuracy limit: measured.
        var far = record
        let farSettled = far.stepSettled(
            Position(coordinate: Fixtures.offset(east: 225)), at: Fixtures.at(2), accuracy: 0,
            epoch: engine.requestEpoch)
        #expect(!farSettled)
        #expect(far.lastPosition == record.lastPosition)
        var later = record
        let laterSettled = later.stepSettled(position, at: Fixtures.at(2), accuracy: 5, epoch: engine.requestEpoch + 1)
        #expect(!laterSettled)
        var limited = record
        limited.safeAccuracy = 4
        let limitedSettled = limited.stepSettled(position, at: Fixtures.at(2), accuracy: 5, epoch: engine.requestEpoch)
        #expect(!limitedSettled)
    }

    @Test func circleCertificatesStayWithinAKilometre() throws {
        // 10 km inside a 30 km circle the threshold is 10 km away, but the certificate's disc is
        // only padded for a kilometre of local projection.
        let (_, record) = try Self.trackedRecord(radius: 30_000, thenEast: 20_000, at: 1)
        #expect(record.safe.radius > 900)
        #expect(record.safe.radius <= 1000)
    }

    @Test func certificatesCountAnExitStreakUntilItWouldConfirm() throws {
        // Out past the exit threshold (s = 100 m, exit cushion 20 m, exit delay 20 s): the fix at
        // 2 s opens the exit streak and a certificate of about 79 m. A fix 10 m on at 3 s is
        // counted without a measurement; one after the delay would confirm, so it is left to the
        // full step.
        let (engine, record) = try Self.trackedRecord(radius: 200, thenEast: 300, at: 2)
        #expect(record.machine.isInside)
        #expect(record.safeCondition == .exit)
        #expect(record.machine.pendingStreak?.fixes == 1)
        var counted = record
        let position = Position(coordinate: Fixtures.offset(east: 310))
        let countedSettled = counted.stepSettled(position, at: Fixtures.at(3), accuracy: 0, epoch: engine.requestEpoch)
        #expect(countedSettled)
        #expect(counted.machine.pendingStreak?.fixes == 2)
        #expect(counted.machine.pendingStreak?.since == Fixtures.at(2))
        var due = record
        let dueSettled = due.stepSettled(position, at: Fixtures.at(22.5), accuracy: 0, epoch: engine.requestEpoch)
        #expect(!dueSettled)
        #expect(due.machine.pendingStreak?.fixes == 1)
    }
}
