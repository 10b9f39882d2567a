import Fenceline
import Foundation
import TestSupport
import Testing

/// SPEC §6: beacon regions, smoothing, distance, proximity and the enter/exit rules.
@Suite struct BeaconTests {
    typealias F = Fixtures
    static let uuid = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"

    static func request(
        _ id: String = "dock", major: Int? = nil, minor: Int? = nil, devices: [String]? = nil,
        configure: (inout BeaconTrigger) -> Void = { _ in }
    ) -> NotificationRequest {
        var trigger = BeaconTrigger(uuid: uuid, major: major, minor: minor)
        configure(&trigger)
        return NotificationRequest(id: id, trigger: .beacon(trigger), devices: devices)
    }

    static func seen(_ seconds: Double, rssi: Double, major: Int = 1, minor: Int = 7, txPower: Double? = nil) -> Reading
    {
        seen("phone", seconds, rssi: rssi, major: major, minor: minor, txPower: txPower)
    }

    static func seen(
        _ device: String, _ seconds: Double, rssi: Double, major: Int = 1, minor: Int = 7, txPower: Double? = nil
    ) -> Reading {
        .sighting(
            BeaconSighting(
                device: device, time: F.at(seconds), beacon: BeaconIdentity(uuid: uuid, major: major, minor: minor),
                rssi: rssi,
                txPower: txPower))
    }

    @Test func distanceModelAndProximityBand() {
        let model = DistanceModel.standard
        #expect(abs(model.distance(rssi: -59, txPower: -59) - (0.42093 + 0.54992)) < 1e-12)
        #expect(abs(model.distance(rssi: -50, txPower: -59) - pow(50.0 / 59, 10)) < 1e-12)
        #expect(Proximity.classify(distance: 2.9, previous: nil) == .near)
        #expect(Proximity.classify(distance: 3.2, previous: .near) == .near)  // inside the 10 % band
        #expect(Proximity.classify(distance: 3.3, previous: .near) == .far)  // reaches 1.1 × 3 m
        #expect(Proximity.classify(distance: 3.2, previous: nil) == .far)  // first sample: no band
        #expect(Proximity.classify(distance: 2.99, previous: .far) == .near)  // nearer: plain boundary
        #expect(Proximity.classify(distance: 0.52, previous: .immediate) == .immediate)
        #expect(Proximity.classify(distance: 0.55, previous: .immediate) == .near)
        #expect(Proximity.classify(distance: 5, previous: .immediate) == .far)
    }

    @Test func entersOnACountingSightingAndExitsAfterTheTimeout() throws {
        let events = try F.run([Self.request()], [Self.seen(0, rssi: -60), Self.seen(10, rssi: -62)], until: F.at(100))
        #expect(events.map { F.label($0) } == ["enter@0", "exit@40"])
        let exit = events[1]
        #expect(exit.trigger == .beacon)
        #expect(exit.since == F.at(10))
        #expect(exit.beacon?.identity == BeaconIdentity(uuid: Self.uuid, major: 1, minor: 7))
        // The average of −60 and −62 (n = 2: nothing trimmed).
        #expect(exit.beacon?.rssi == -61)
        #expect(exit.beacon?.proximity == .near)
    }

    @Test func sightingExactlyAtTheTimeoutKeepsTheDeviceInside() throws {
        // Unseen for exactly 30 s: the sighting stamped at the due time is applied first.
        let kept = try F.run(
            [Self.request()], [Self.seen(0, rssi: -60), Self.seen(30, rssi: -60), Self.seen("other", 50, rssi: -60)])
        #expect(kept.map { F.label($0, withDevice: true) } == ["enter/phone@0", "enter/other@50"])
        let lost = try F.run([Self.request()], [Self.seen(0, rssi: -60), Self.seen(30.001, rssi: -60)])
        #expect(lost.map { F.label($0) } == ["enter@0", "exit@30", "enter@30.001"])
    }

    @Test func wildcardsMatchByHashLookup() throws {
        let requests = [
            Self.request("any"), Self.request("major-1", major: 1), Self.request("exact", major: 1, minor: 7),
            Self.request("minor-7", minor: 7),
            Self.request("other-uuid") { $0.uuid = "00000000-0000-0000-0000-000000000001" },
        ]
        let events = try F.run(
            requests,
            [
                Self.seen("a", 0, rssi: -60, major: 1, minor: 7), Self.seen("b", 0, rssi: -60, major: 1, minor: 9),
                Self.seen("c", 0, rssi: -60, major: 2, minor: 7),
            ])
        #expect(
            events.map { F.label($0, withRequest: true, withDevice: true) } == [
                "any.enter/a@0", "any.enter/b@0", "any.enter/c@0", "exact.enter/a@0", "major-1.enter/a@0",
                "major-1.enter/b@0", "minor-7.enter/a@0", "minor-7.enter/c@0",
            ])
    }

    @Test func proximitySettingDecidesWhatCounts() throws {
        // rssi −90 with txPower −59: ratio 1.53, about 8 m: far. rssi −60: about 1 m: near.
        let events = try F.run(
            [Self.request { $0.proximity = .near }],
            [
                Self.seen(0, rssi: -90), Self.seen(1, rssi: -90), Self.seen(25, rssi: -60),
            ])
        // Smoothing: at 25 s the window holds −90 and −90 (strictly younger than 20 s? no: 0 and 1 are
        // 25 and 24 s old) so only −60 remains and counts.
        #expect(events.map { F.label($0) } == ["enter@25"])
    }

    @Test func readingsOfZeroOrOneTwentySevenAreNotSightings() throws {
        let events = try F.run([Self.request()], [Self.seen(0, rssi: 0), Self.seen(1, rssi: 127)])
        #expect(events.isEmpty)
    }

    @Test func averageTrimsOutliers() throws {
        // n = 5: ⌊5/10⌋ + 1 = 1 sample dropped from each end: (−61 − 60 − 60) / 3.
        let request = Self.request { $0.proximity = .near }
        let events = try F.run(
            [request],
            [
                Self.seen(0, rssi: -60), Self.seen(1, rssi: -61), Self.seen(2, rssi: -59), Self.seen(3, rssi: -100),
                Self.seen(4, rssi: -60),
            ], until: F.at(100))
        let exit = try #require(events.last)
        #expect(F.label(exit) == "exit@34")
        #expect(abs((exit.beacon?.rssi ?? 0) - (-181.0 / 3)) < 1e-12)
        #expect(exit.beacon?.proximity == .near)
    }

    @Test func armaKeepsDoublePrecisionAndConverges() throws {
        let request = Self.request {
            $0.filter = .arma(coefficient: 0.1)
            $0.exitDelay = .zero
            $0.proximity = .immediate
        }
        // Start −50 (immediate at txPower −60: 0.83¹⁰ ≈ 0.16 m), then −60 again and again: x_n = −60 + 10·0.9ⁿ
        // creeps towards −60 and leaves "immediate" once the distance reaches 0.55 m.
        var readings = [Self.seen(0, rssi: -50, txPower: -60)]
        readings += (1...30).map { Self.seen(Double($0), rssi: -60, txPower: -60) }
        let events = try F.run([request], readings)
        let exit = try #require(events.first { $0.kind == .exit })
        // Find the sighting that first left "immediate": x_n = −60 + 10·0.9ⁿ with distance ≥ 0.55 m.
        var x = -50.0
        var step = 0
        repeat {
            step += 1
            x -= 0.1 * (x + 60)
        } while DistanceModel.standard.distance(rssi: x, txPower: -60) < 0.55
        #expect(exit.time == F.at(Double(step)))
        #expect(exit.beacon?.rssi == x)
        #expect(x < -51)  // an integer filter would have stalled at −51
    }

    @Test func armaAfterTenSamplesIsExact() throws {
        let request = Self.request { $0.filter = .arma(coefficient: 0.1) }
        var readings = [Self.seen(0, rssi: -50)]
        readings += (1...10).map { Self.seen(Double($0), rssi: -60) }
        let events = try F.run([request], readings, until: F.at(100))
        var x = -50.0
        for _ in 1...10 { x -= 0.1 * (x - -60) }
        #expect(events.last?.beacon?.rssi == x)
        #expect(abs(x - (-60 + 10 * pow(0.9, 10))) < 1e-9)
    }

    @Test func exitDelayExitsOnSightingsThatStopCounting() throws {
        let request = Self.request {
            $0.proximity = .near
            $0.exitDelay = TimeSpan(seconds: 5)
            $0.window = TimeSpan(seconds: 1)
        }
        let events = try F.run(
            [request],
            [
                Self.seen(0, rssi: -60), Self.seen(10, rssi: -95), Self.seen(12, rssi: -60),  // cancelled
                Self.seen(20, rssi: -95), Self.seen(22, rssi: -96), Self.seen(26, rssi: -95),
            ])
        #expect(events.map { F.label($0) } == ["enter@0", "exit@25"])
        #expect(events[1].since == F.at(20))
        #expect(events[1].beacon?.rssi == -96)
    }

    /// SPEC §6: an emptied smoothing window restarts the average, not the class, while inside.
    @Test func proximityBandOutlivesAnEmptyWindowWhileInside() throws {
        let request = Self.request {
            $0.proximity = .near
            $0.window = TimeSpan(seconds: 2)
            $0.exitDelay = .zero
        }
        // 2.58 m (near), then 3.11, 3.20, 3.28 m: inside the 3.3 m band; then 3.48 m: far.
        let rssi = [-74, -76.5, -76.9, -77.2, -78]
        let sightings = rssi.enumerated().map { Self.seen(Double($0.offset) * 5, rssi: $0.element, txPower: -59) }
        let events = try F.run([request], sightings)
        #expect(events.map { F.label($0) } == ["enter@0", "exit@20"])
        #expect(events[1].beacon?.rssi == -78)
        #expect(events[1].beacon?.proximity == .far)
        // Outside, an emptied window takes the class with it: the first sample after it has no band.
        let again = try F.run([request], sightings + [Self.seen(30, rssi: -76.5, txPower: -59)])
        #expect(again.map { F.label($0) } == ["enter@0", "exit@20"])
    }

    @Test func enterDelayNeedsEverySightingToCount() throws {
        let request = Self.request {
            $0.proximity = .near
            $0.enterDelay = TimeSpan(seconds: 5)
            $0.window = TimeSpan(seconds: 1)
        }
        let events = try F.run(
            [request],
            [
                Self.seen(0, rssi: -60), Self.seen(2, rssi: -95),  // breaks the streak
                Self.seen(3, rssi: -60), Self.seen(6, rssi: -61), Self.seen(9, rssi: -60),
            ])
        #expect(events.map { F.label($0) } == ["enter@8"])
        #expect(events[0].since == F.at(3))
    }

    @Test func scopeRepeatsAndInterleavedDevices() throws {
        let request = Self.request(devices: ["a", "b"]) {
            $0.repeats = false
            $0.exitTimeout = TimeSpan(seconds: 5)
        }
        let events = try F.run(
            [request],
            [
                Self.seen("a", 0, rssi: -60), Self.seen("b", 1, rssi: -60), Self.seen("c", 2, rssi: -60),
                Self.seen("a", 20, rssi: -60), Self.seen("b", 21, rssi: -60),
            ], until: F.at(60))
        #expect(events.map { F.label($0, withDevice: true) } == ["enter/a@0", "enter/b@1"])
    }
}
