import Fenceline
import TestSupport
import Testing

/// SPEC §12 "Position filters": `maxSpeed`, `minDistance` and a request's `maxFuture`, each per
/// (request, device) against the last fix that request accepted.
@Suite struct PositionFilterTests {
    typealias F = Fixtures

    static func filtered(
        _ filters: PositionFilters, id: String = "gate", east: Double = 0, initial: InitialPolicy = .silent
    ) -> NotificationRequest {
        var request = F.circle(id, center: F.offset(east: east), hysteresis: .naive) { $0.initial = initial }
        request.filters = filters
        return request
    }

    @Test func aJumpFasterThanMaxSpeedIsDroppedAndCounted() throws {
        // 5 km in one second is 5,000 m/s: dropped, so the fix in the fence enters nothing, and
        // the reference stays at the first fix (the next fix is measured from there).
        let request = Self.filtered(PositionFilters(maxSpeed: 50))
        let engine = try Engine(catalog: Catalog(requests: [request]))
        var events: [Event] = []
        for reading in [F.fix(0, east: 5_000), F.fix(1, east: 0), F.fix(2, east: 4_990), F.fix(300, east: 0)] {
            events += engine.process(reading)
        }
        events += engine.finish()
        #expect(events.map { F.label($0) } == ["enter@300"])
        #expect(engine.statistics.filtered == 1)
        // Without the filter the jump enters and the next fix exits.
        let plain = try F.run(
            [F.circle(hysteresis: .naive)], [F.fix(0, east: 5_000), F.fix(1, east: 0), F.fix(2, east: 4_990)])
        #expect(plain.map { F.label($0) } == ["enter@1", "exit@2"])
    }

    @Test func aFixAtTheSameTimeElsewhereIsDroppedByMaxSpeed() throws {
        let request = Self.filtered(PositionFilters(maxSpeed: 1_000))
        let events = try F.run([request], [F.fix(0, east: 300), F.fix(0, east: 0), F.fix(600, east: 0)])
        #expect(events.map { F.label($0) } == ["enter@600"])
    }

    @Test func aFixWithinMinDistanceOnlyRefreshesTheReferenceTime() throws {
        // The fix 30 m out of a 100 m circle from inside (at 90 m) is 40 m from the reference:
        // under minDistance 50 it exits nothing. The refreshed time then makes a 4.9 km jump
        // one second later too fast for maxSpeed 100, which it would not be from the first fix's time.
        let request = Self.filtered(PositionFilters(maxSpeed: 100, minDistance: 50), initial: .enter)
        let events = try F.run(
            [request], [F.fix(0, east: 90), F.fix(60, east: 130), F.fix(61, east: 5_000), F.fix(62, east: 145)])
        #expect(events.map { F.label($0) } == ["enter@0", "exit@62"])
    }

    @Test func aRequestAddedLaterTakesItsFirstFixEvenWhenOthersDropIt() throws {
        // "old" has a reference from the first fix; "new" is added after it, so the jump is its
        // first fix (taken: it starts inside, silently) while "old" drops it. The fix back is then
        // too fast for "new" (from the jump) and taken by "old".
        let old = Self.filtered(PositionFilters(maxSpeed: 50), id: "old", east: 5_000, initial: .state)
        let new = Self.filtered(PositionFilters(maxSpeed: 50), id: "new", east: 5_000, initial: .state)
        let engine = try Engine(catalog: Catalog(requests: [old]))
        var events = engine.process(F.fix(0, east: 0))
        try engine.add(new)
        events += engine.process(F.fix(1, east: 5_000))
        events += engine.process(F.fix(2, east: 10))
        events += engine.process(F.fix(100, east: 4_000))  // slow enough from either reference
        events += engine.finish()
        #expect(
            events.map { F.label($0, withRequest: true) } == [
                "old.state:outside@0", "new.state:inside@1", "new.exit@100",
            ])
        // Each request alone gives the same events: the references are the requests' own.
        let alone = try F.run([new], [F.fix(1, east: 5_000), F.fix(2, east: 10), F.fix(100, east: 4_000)])
        #expect(alone.map { F.label($0) } == ["state:inside@1", "exit@100"])
    }

    @Test func aRequestsMaxFutureDropsAFixStampedTooFarAhead() throws {
        // Two devices: d2's fix is an hour ahead of the clock d1 set; the request with maxFuture 60
        // drops it, the one without takes it.
        let strict = Self.filtered(PositionFilters(maxFuture: TimeSpan(seconds: 60)), id: "strict")
        let lax = Self.filtered(PositionFilters(maxSpeed: 1_000_000), id: "lax")
        let events = try F.run(
            [strict, lax],
            [F.fix("d1", 0, east: 300), F.fix("d2", 1, east: 300), F.fix("d2", 3_601, east: 0)])
        #expect(events.map { F.label($0, withRequest: true) } == ["lax.enter@3601"])
    }

    /// With a reorder window a request's `maxFuture` is measured on arrival, against the largest
    /// time read before the reading (SPEC §12), not against the clock when the window lets it
    /// out; a checkpoint keeps the lead of a reading it holds.
    @Test(arguments: [false, true]) func aRequestsMaxFutureIsMeasuredOnArrival(cut: Bool) throws {
        let strict = Self.filtered(PositionFilters(maxFuture: TimeSpan(seconds: 60)), id: "strict")
        let lax = Self.filtered(PositionFilters(maxSpeed: 1_000_000), id: "lax")
        let configuration = Engine.Configuration(reorderWindow: TimeSpan(seconds: 120))
        var engine = try Engine(catalog: Catalog(requests: [strict, lax]), configuration: configuration)
        // The fix at 100 arrives 100 s ahead of the 0 read before it; the late fix at 60 then
        // comes in between, so the clock it would be measured against when let out is 60.
        var events = engine.process(F.fix(0, east: 300)) + engine.process(F.fix(100, east: 0))
        if cut { engine = try Engine(resuming: engine.checkpoint(), configuration: configuration) }
        events += engine.process(F.fix(60, east: 300)) + engine.finish()
        #expect(events.map { F.label($0, withRequest: true) } == ["lax.enter@100"])
        #expect(engine.statistics.filtered == 1)
    }

    @Test func theGlobalMaxFutureRefusesLinesAgainstTheLargestTimeRead() throws {
        var catalog = Catalog(requests: [F.circle(hysteresis: .naive)])
        catalog.defaultFilters = PositionFilters(maxFuture: TimeSpan(seconds: 60))
        let engine = try Engine(catalog: catalog)
        #expect(engine.futureRefusal(at: F.at(86_400)) == nil)  // the first line never fails it
        _ = engine.process(F.fix(0, east: 300))
        #expect(engine.futureRefusal(at: F.at(60)) == nil)  // exactly maxFuture ahead is accepted
        let refusal = try #require(engine.futureRefusal(at: F.at(60.5)))
        #expect(refusal.hasPrefix("future time: 60.5 s ahead"))
    }

    @Test func filtersAreJudgedOnlyOnFixesTheAccuracyThresholdAdmits() throws {
        // The inaccurate fix is ignored (maxAccuracy first), so it is no reference: the fix after
        // it is measured from the first fix (15 m/s) and taken.
        var hysteresis = Hysteresis.naive
        hysteresis.maxAccuracy = 50
        var request = F.circle(hysteresis: hysteresis)
        request.filters = PositionFilters(maxSpeed: 50)
        let events = try F.run(
            [request], [F.fix(0, east: 300), F.fix(1, east: 5_000, accuracy: 100), F.fix(20, east: 0)])
        #expect(events.map { F.label($0) } == ["enter@20"])
    }

    @Test func aDroppedFixCancelsNoStreakAndEndsNoCrossPath() throws {
        var hysteresis = Hysteresis.naive
        hysteresis.enterDelay = TimeSpan(seconds: 10)
        var request = F.circle(hysteresis: hysteresis)
        request.filters = PositionFilters(maxSpeed: 50)
        // The jump out (2 km in a second) is dropped: the enter streak begun at 10 s goes on.
        let events = try F.run(
            [request], [F.fix(0, east: 300), F.fix(10, east: 0), F.fix(11, east: 2_000), F.fix(25, east: 0)])
        #expect(events.map { F.label($0) } == ["enter@20"])
        // A cross path runs from the last fix taken, not from a dropped one.
        var cross = F.circle("line", hysteresis: .naive) {
            $0.notifyOnCross = true
            $0.notifyOnEntry = false
            $0.notifyOnExit = false
        }
        cross.filters = PositionFilters(maxSpeed: 100)
        let crossed = try F.run(
            [cross],
            [F.fix(0, east: -300), F.fix(1, east: 50_000), F.fix(10, east: 300)])
        #expect(crossed.map { F.label($0) } == ["cross@10"])
    }

    /// A random stream of jumps, jitter and requests added on the way: the filtered engine gives,
    /// for each request, exactly the events that request gives alone in an engine of its own
    /// (its references are its own, whatever the others do).
    @Test(arguments: 0..<6) func eachRequestFiltersAsIfAlone(seed: UInt64) throws {
        var random = SplitMix(state: seed)
        func pick(_ values: [Double?]) -> Double? { values[Int(random.next() % UInt64(values.count))] }
        var requests: [NotificationRequest] = []
        for index in 0..<6 {
            var request = Self.filtered(
                PositionFilters(maxSpeed: pick([nil, 20, 60]), minDistance: pick([nil, 15, 40])), id: "r\(index)",
                east: Double(random.next() % 4) * 400, initial: index % 2 == 0 ? .state : .silent)
            if case .region(var trigger) = request.trigger, index % 3 == 1 {
                trigger.hysteresis.maxAccuracy = 40
                trigger.notifyOnCross = true
                request.trigger = .region(trigger)
            }
            requests.append(request)
        }
        // Readings, with a request added every so often (by an `add` record at its time).
        var script: [(reading: Reading, adds: NotificationRequest?)] = []
        var position = ["a": 0.0, "b": 600.0]
        let initial = requests.prefix(2)
        var waiting = Array(requests.dropFirst(2))
        for step in 1...600 {
            let device = random.next() % 3 == 0 ? "b" : "a"
            var east = position[device]!
            switch random.next() % 10 {
            case 0: east += Double(random.next() % 3_000) - 1_500  // a jump
            case 1, 2: east += Double(random.next() % 30) - 15  // jitter
            default: east += Double(random.next() % 40) - 20
            }
            // Kept among the fences (0 to 1,200 m east), so that the devices go in and out.
            if east < -200 || east > 1_400 { east = Double(random.next() % 1_200) }
            position[device] = east
            let accuracy: Double? = random.next() % 5 == 0 ? 80 : 10
            let adds = step % 100 == 0 && !waiting.isEmpty ? waiting.removeFirst() : nil
            script.append((F.fix(device, Double(step), east: east, accuracy: accuracy), adds))
        }
        var filtered = 0
        func events(of kept: [NotificationRequest]) throws -> [String] {
            let ids = Set(kept.map(\.id))
            let engine = try Engine(catalog: Catalog(requests: initial.filter { ids.contains($0.id) }))
            var events: [Event] = []
            for (reading, adds) in script {
                if let adds, ids.contains(adds.id) { try engine.add(adds) }
                events += engine.process(reading)
            }
            events += engine.finish()
            if kept.count > 1 { filtered = engine.statistics.filtered }
            return events.map { F.label($0, withRequest: true, withDevice: true) }
        }
        let together = try events(of: requests)
        for request in requests {
            let alone = try events(of: [request])
            #expect(together.filter { $0.hasPrefix("\(request.id).") } == alone, "request \(request.id)")
        }
        #expect(together.count > 10)
        #expect(filtered > 20)
    }

    @Test func aCheckpointKeepsTheReferencesAndOverrides() throws {
        let old = Self.filtered(PositionFilters(maxSpeed: 50, minDistance: 20), id: "old", east: 5_000, initial: .state)
        let new = Self.filtered(PositionFilters(maxSpeed: 50, minDistance: 20), id: "new", east: 5_000, initial: .state)
        let first = [F.fix(0, east: 0)]
        let second = [F.fix(1, east: 5_000), F.fix(2, east: 10), F.fix(3, east: 25), F.fix(100, east: 4_000)]
        func run(cut: Bool) throws -> [String] {
            var engine = try Engine(catalog: Catalog(requests: [old]))
            var events: [Event] = []
            for reading in first { events += engine.process(reading) }
            try engine.add(new)
            events += engine.process(second[0])  // "new" now has a reference of its own
            if cut {
                events += engine.finish()
                engine = try Engine(resuming: engine.checkpoint())
            }
            for reading in second.dropFirst() { events += engine.process(reading) }
            events += engine.finish()
            return events.map { F.label($0, withRequest: true) }
        }
        #expect(try run(cut: true) == run(cut: false))
        #expect(try run(cut: false).contains("new.exit@100"))
    }

    @Test func aRequestWithAReferenceOfItsOwnDoesNotCrossForOthers() throws {
        // "s" gets a reference of its own (its first fix is one the bucket only refreshes); the
        // next fix crosses "t" once, measured from the bucket's reference, not again from s's.
        func crossing(_ id: String, east: Double) -> NotificationRequest {
            var request = F.circle(id, center: F.offset(east: east), radius: 20, hysteresis: .naive) {
                $0.notifyOnCross = true
                $0.notifyOnEntry = false
                $0.notifyOnExit = false
            }
            request.filters = PositionFilters(minDistance: 20)
            return request
        }
        let engine = try Engine(catalog: Catalog(requests: [crossing("t", east: 250)]))
        var events = engine.process(F.fix(0, east: 0))
        try engine.add(crossing("s", east: 5_000))
        events += engine.process(F.fix(10, east: 5))
        events += engine.process(F.fix(40, east: 500))
        events += engine.finish()
        #expect(events.map { F.label($0, withRequest: true) } == ["t.cross@40"])
    }

    @Test func aRequestsMaxFutureMayDropItsFirstFix() throws {
        let strict = Self.filtered(PositionFilters(maxFuture: TimeSpan(seconds: 60)), id: "strict", initial: .state)
        let events = try F.run(
            [strict], [F.fix("a", 0, east: 300), F.fix("b", 3_600, east: 0), F.fix("b", 3_610, east: 0)])
        // b's first fix is an hour ahead: dropped; its next (10 s on) is its first taken.
        #expect(events.map { F.label($0, withDevice: true) } == ["state:outside/a@0", "state:inside/b@3610"])
    }
}
