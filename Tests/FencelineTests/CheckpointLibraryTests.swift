import Fenceline
import TestSupport
import Testing

/// SPEC §10 through the library: `Engine.checkpoint()` between any two readings, mid-instant
/// included, and `Engine(resuming:)` go on exactly as one engine would.
@Suite struct CheckpointLibraryTests {
    static let requests: [NotificationRequest] = [
        Fixtures.circle("gate", hysteresis: .naive),
        Fixtures.circle("slow", radius: 180) {
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 20)
            $0.hysteresis.enterDelay = TimeSpan(seconds: 5)
        },
        NotificationRequest(
            id: "dock", trigger: .beacon(BeaconTrigger(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", proximity: .near))),
        NotificationRequest(
            id: "ping", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 60), repeats: true))),
    ]

    /// Fixes and sightings of three devices, several at each instant.
    static func readings() -> [Reading] {
        var generator = SplitMix(state: 3)
        return (0..<240).map { index in
            let device = "d\(index % 3)"
            let seconds = Double(index / 2)
            if index % 5 == 4 {
                let beacon = BeaconIdentity(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 1, minor: 7)
                let rssi = Double(Int.random(in: -80 ... -55, using: &generator))
                return .sighting(BeaconSighting(device: device, time: Fixtures.at(seconds), beacon: beacon, rssi: rssi))
            }
            return Fixtures.fix(device, seconds, east: Double.random(in: -150...350, using: &generator))
        }
    }

    @Test(arguments: [0.0, 4.0]) func aCheckpointAnywhereGoesOnExactly(window: Double) throws {
        let configuration = Engine.Configuration(reorderWindow: TimeSpan(seconds: window))
        let readings = Self.readings()
        let whole = try Engine(catalog: Catalog(requests: Self.requests), configuration: configuration)
        var expected = readings.flatMap { whole.process($0) }
        expected += whole.finish(until: Fixtures.at(400))
        #expect(expected.count > 20)
        for cut in stride(from: 1, to: readings.count, by: 17) {
            let first = try Engine(catalog: Catalog(requests: Self.requests), configuration: configuration)
            var events = readings[..<cut].flatMap { first.process($0) }
            let state = first.checkpoint()
            let second = try Engine(resuming: state, configuration: configuration)
            events += readings[cut...].flatMap { second.process($0) }
            events += second.finish(until: Fixtures.at(400))
            #expect(events == expected, "cut before reading \(cut)")
            #expect(second.statistics == whole.statistics)
            #expect(second.deliveredNotifications == whole.deliveredNotifications)
            #expect(second.pendingRequestIDs == whole.pendingRequestIDs)
        }
    }
}
