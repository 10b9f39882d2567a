import Foundation
import TestSupport
import Testing

@testable import Fenceline

/// A device inside many overlapping fences at once: past `DeviceTable.mappedRecords` its records
/// are found through a map and removed by moving the last into the gap. The events must be those
/// of each fence run on its own, in SPEC §4 order, and a checkpoint anywhere must go on exactly.
@Suite struct ManyRecordsTests {
    /// 120 circles on one centre with radii 20…258 m: a device walking out and back crosses them
    /// one after another, so records come and go in every order.
    static let requests: [NotificationRequest] = (0..<120).map { index in
        var request = Fixtures.circle("r\(index)", radius: 20 + 2 * Double(index), hysteresis: .naive) {
            $0.notifyOnDwell = index % 7 == 0
            $0.dwell = TimeSpan(seconds: 25)
        }
        request.content.title = "fence \(index)"
        return request
    }

    /// Two devices going out to 300 m and back in uneven steps, with jumps back to the centre.
    static func readings() -> [Reading] {
        var generator = SplitMix(state: 11)
        var readings: [Reading] = []
        for step in 0..<160 {
            for device in ["a", "b"] {
                let distance =
                    step % 23 == 0 ? 0 : Double.random(in: 0...300, using: &generator) * Double(step % 40) / 40
                readings.append(Fixtures.fix(device, Double(step * 10), east: distance))
            }
        }
        return readings
    }

    @Test func eventsAreEachFencesOwnInSpecOrder() throws {
        let readings = Self.readings()
        let until = Fixtures.at(2_000)
        let together = try Fixtures.run(Self.requests, readings, until: until)
        var alone: [Event] = []
        for request in Self.requests { alone += try Fixtures.run([request], readings, until: until) }
        alone.sort { Event.releasePrecedes($0, $1) ?? false }
        func unnumbered(_ events: [Event]) -> [Event] {
            events.map {
                var event = $0
                event.sequence = 0
                return event
            }
        }
        #expect(together.count > 2_000)
        #expect(unnumbered(together) == unnumbered(alone))
    }

    @Test func aCheckpointAnywhereGoesOnExactly() throws {
        let readings = Self.readings()
        let catalog = Catalog(requests: Self.requests)
        let whole = try Engine(catalog: catalog)
        var expected = readings.flatMap { whole.process($0) }
        expected += whole.finish(until: Fixtures.at(2_000))
        for cut in stride(from: 7, to: readings.count, by: 41) {
            let first = try Engine(catalog: catalog)
            var events = readings[..<cut].flatMap { first.process($0) }
            let second = try Engine(resuming: first.checkpoint())
            events += readings[cut...].flatMap { second.process($0) }
            events += second.finish(until: Fixtures.at(2_000))
            #expect(events == expected, "cut before reading \(cut)")
            #expect(second.deliveredNotifications == whole.deliveredNotifications)
        }
    }
}
