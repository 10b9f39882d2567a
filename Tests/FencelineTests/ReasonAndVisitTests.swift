import Fenceline
import TestSupport
import Testing

/// SPEC §12 "Reasons and visits": what confirmed each enter, exit, dwell and cross, and the stay
/// each belongs to, numbered per request and device, with the exit's duration.
@Suite struct ReasonAndVisitTests {
    typealias F = Fixtures

    static func stay(_ event: Event) -> String {
        var text = "\(event.kind.rawValue):\(event.reason?.rawValue ?? "-")"
        if let visit = event.visitID { text += ":\(visit)" }
        if let duration = event.duration { text += ":\(Int(duration.seconds))s" }
        return text
    }

    @Test func regionReasonsFollowWhatConfirmedTheEvent() throws {
        var delayed = Hysteresis.naive
        delayed.enterDelay = TimeSpan(seconds: 10)
        let request = F.circle(hysteresis: delayed) {
            $0.initial = .enter
            $0.notifyOnDwell = true
            $0.dwell = TimeSpan(seconds: 30)
        }
        let events = try F.run(
            [request],
            [F.fix(0, east: 0), F.fix(50, east: 300), F.fix(60, east: 0), F.fix(75, east: 0), F.fix(200, east: 300)])
        #expect(
            events.map(Self.stay) == [
                "enter:initial:gate/d1/1", "dwell:delayed:gate/d1/1", "exit:observed:gate/d1/1:50s",
                "enter:delayed:gate/d1/2", "dwell:delayed:gate/d1/2", "exit:observed:gate/d1/2:140s",
            ])
    }

    @Test func everyStayCountsNotifiedOrNot() throws {
        // Enters are not notified and the first stay begins silently: the exits still number
        // each stay, and the first one's duration runs from the first fix.
        let request = F.circle(hysteresis: .naive) { $0.notifyOnEntry = false }
        let events = try F.run(
            [request], [F.fix(0, east: 0), F.fix(20, east: 300), F.fix(30, east: 0), F.fix(45, east: 300)])
        #expect(events.map(Self.stay) == ["exit:observed:gate/d1/1:20s", "exit:observed:gate/d1/2:15s"])
    }

    @Test func numbersAreNotReusedAfterAReplacementByID() throws {
        let engine = try Engine(catalog: Catalog(requests: [F.circle(hysteresis: .naive)]))
        var events: [Event] = []
        for reading in [F.fix(0, east: 300), F.fix(10, east: 0), F.fix(20, east: 300)] {
            events += engine.process(reading)
        }
        try engine.add(F.circle(radius: 150, hysteresis: .naive))  // the same id: a replacement
        for reading in [F.fix(30, east: 300), F.fix(40, east: 0), F.fix(50, east: 300)] {
            events += engine.process(reading)
        }
        events += engine.finish()
        #expect(
            events.map(Self.stay) == [
                "enter:observed:gate/d1/1", "exit:observed:gate/d1/1:10s", "enter:observed:gate/d1/2",
                "exit:observed:gate/d1/2:10s",
            ])
    }

    @Test func crossAndStateCarryAReasonOrNothing() throws {
        let cross = F.circle("line", hysteresis: .naive) {
            $0.notifyOnCross = true
            $0.initial = .state
        }
        let events = try F.run([cross], [F.fix(0, east: -300), F.fix(10, east: 300)])
        #expect(events.map(Self.stay) == ["state:-", "cross:observed"])
    }

    @Test func beaconReasonsAreObservedDelayedAndTimeout() throws {
        let uuid = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"
        var delayed = BeaconTrigger(uuid: uuid, major: 1, minor: 7)
        delayed.enterDelay = TimeSpan(seconds: 5)
        let requests = [
            NotificationRequest(id: "at-once", trigger: .beacon(BeaconTrigger(uuid: uuid, major: 1, minor: 7))),
            NotificationRequest(id: "delayed", trigger: .beacon(delayed)),
        ]
        func seen(_ seconds: Double) -> Reading {
            .sighting(
                BeaconSighting(
                    device: "phone", time: F.at(seconds), beacon: BeaconIdentity(uuid: uuid, major: 1, minor: 7),
                    rssi: -60))
        }
        let events = try F.run(requests, [seen(0), seen(6), seen(10)], until: F.at(100))
        #expect(
            events.map { "\($0.requestID) " + Self.stay($0) } == [
                "at-once enter:observed:at-once/phone/1", "delayed enter:delayed:delayed/phone/1",
                "at-once exit:timeout:at-once/phone/1:40s", "delayed exit:timeout:delayed/phone/1:40s",
            ])
    }

    @Test func aCheckpointKeepsTheStayAndTheCounters() throws {
        let request = F.circle(hysteresis: .naive)
        let readings = [F.fix(0, east: 300), F.fix(10, east: 0), F.fix(20, east: 300), F.fix(30, east: 0)]
        let rest = [F.fix(45, east: 300), F.fix(50, east: 0), F.fix(60, east: 300)]
        var engine = try Engine(catalog: Catalog(requests: [request]))
        var cut: [Event] = []
        for reading in readings { cut += engine.process(reading) }
        cut += engine.finish()
        engine = try Engine(resuming: engine.checkpoint())
        for reading in rest { cut += engine.process(reading) }
        cut += engine.finish()
        #expect(cut.map(Self.stay) == (try F.run([request], readings + rest)).map(Self.stay))
        #expect(cut.last.map(Self.stay) == "exit:observed:gate/d1/3:10s")
    }
}
