import TestSupport
import Testing

@testable import Fenceline

/// Requests coming and going mid-stream, control records, and the sparse per-device state.
@Suite struct EngineRequestTests {
    typealias F = Fixtures

    /// A forked engine (`--threads`) shares its flat slots and its index with the engine it was
    /// forked from, read without retaining them, until either changes them; then each goes on
    /// with its own.
    @Test func aForkSharesItsSlotsAndIndexUntilEitherChanges() throws {
        let engine = try Engine(catalog: Catalog(requests: [F.circle(hysteresis: .naive), F.circle("other")]))
        _ = engine.process(F.fix("d1", 0, east: 300))  // adds the catalog
        let fork = engine.fork()
        #expect(fork.flatSlotBuffer.baseAddress == engine.flatSlotBuffer.baseAddress)
        #expect(!engine.index.queryStorage.isEmpty)
        #expect(fork.index.queryStorage == engine.index.queryStorage)
        _ = fork.process(.control(ControlRecord(time: F.at(1), operation: .removePending(["gate"]))))
        #expect(fork.flatSlotBuffer.baseAddress != engine.flatSlotBuffer.baseAddress)
        #expect(fork.flatSlotBuffer.baseAddress == fork.flatSlots.withUnsafeBufferPointer { $0.baseAddress })
        #expect(engine.flatSlotBuffer.baseAddress == engine.flatSlots.withUnsafeBufferPointer { $0.baseAddress })
        var kept = engine.process(F.fix("d1", 2, east: 0))
        kept += engine.finish()
        var gone = fork.process(F.fix("d1", 2, east: 0))
        gone += fork.finish()
        #expect(kept.map { F.label($0, withRequest: true) }.contains("gate.enter@2"))
        #expect(!gone.map { F.label($0, withRequest: true) }.contains("gate.enter@2"))
    }

    /// Region requests installed one after another share their settings when they are the same
    /// (a catalog's fences mostly are), and each keeps its own when they differ.
    @Test func regionsWithTheSameSettingsShareThem() throws {
        let engine = try Engine(
            catalog: Catalog(requests: [
                F.circle("a", hysteresis: .naive), F.circle("b", hysteresis: .naive), F.circle("c"),
                F.circle("d"),
            ]))
        _ = engine.process(F.fix("d1", 0, east: 300))
        let settings = engine.requests.map { try! #require($0.region).settings }
        #expect(settings[0] === settings[1])
        #expect(settings[1] !== settings[2] && settings[1] != settings[2])
        #expect(settings[2] === settings[3])
    }

    /// The shared storage's invariants (`Engine.invariantViolations()`) hold on an engine, its
    /// forks and one resumed from a checkpoint, after every kind of change: requests added in bulk
    /// and one by one, replaced and removed (with the index compacting its tombstones), across
    /// polygon, circle, cross-indexed and overlap fences.
    @Test func sharedStorageInvariantsHoldThroughEveryChange() throws {
        var requests: [NotificationRequest] = []
        for index in 0..<300 {
            let center = F.offset(east: Double(index % 20) * 400, north: Double(index / 20) * 400)
            requests.append(
                F.circle("c\(index)", center: center, radius: 60 + Double(index % 7) * 20) {
                    $0.notifyOnCross = index.isMultiple(of: 3)
                    if index.isMultiple(of: 11) { $0.hysteresis = .android }
                })
        }
        let engine = try Engine(catalog: Catalog(requests: requests))
        func check(_ engines: [Engine], _ step: String) {
            for (number, each) in engines.enumerated() {
                #expect(each.invariantViolations() == [], "engine \(number) after \(step)")
            }
        }
        check([engine], "creation")
        _ = engine.process(F.fix("d1", 0, east: 10))
        let forks = [engine.fork(), engine.fork()]
        check([engine] + forks, "the catalog and forking")
        for round in 0..<40 {
            let id = "c\(round * 7 % 300)"
            let time = F.at(Double(round + 1))
            switch round % 4 {
            case 0: _ = forks[0].process(.control(ControlRecord(time: time, operation: .removePending([id]))))
            case 1:
                let moved = F.circle(id, center: F.offset(east: Double(round) * 50), radius: 90) {
                    $0.notifyOnCross = true
                }
                _ = forks[1].process(.control(ControlRecord(time: time, operation: .add(moved))))
            case 2: _ = engine.process(.control(ControlRecord(time: time, operation: .removePending([id]))))
            default: _ = forks[0].process(F.fix("d\(round)", Double(round + 1), east: Double(round) * 30))
            }
            check([engine] + forks, "round \(round)")
        }
        let resumed = try Engine(resuming: forks[1].checkpoint())
        check([resumed, resumed.fork()], "resuming")
    }

    @Test func replacingARequestStartsItsStateAfresh() throws {
        let engine = try Engine(catalog: Catalog(requests: [F.circle(hysteresis: .naive)]))
        var events: [Event] = []
        events += engine.process(F.fix("d1", 0, east: 300))
        events += engine.process(F.fix("d1", 1, east: 0))  // enter
        events += engine.process(.control(ControlRecord(time: F.at(2), operation: .add(F.circle(hysteresis: .naive)))))
        events += engine.process(F.fix("d1", 3, east: 0))  // first fix for the new request: silent
        events += engine.process(F.fix("d1", 4, east: 300))
        events += engine.finish()
        #expect(events.map { F.label($0) } == ["enter@1", "exit@4"])
    }

    @Test func removedRequestsStopFiringAndDropTheirTimers() throws {
        let engine = try Engine(catalog: Catalog(requests: [F.circle(), F.circle("other")]))
        var events: [Event] = []
        events += engine.process(F.fix("d1", 0, east: 0))
        events += engine.process(F.fix("d1", 1, east: 300))  // exit timers due 21 for both
        events += engine.process(.control(ControlRecord(time: F.at(5), operation: .removePending(["gate"]))))
        events += engine.finish(until: F.at(60))
        #expect(events.map { F.label($0, withRequest: true) } == ["other.exit@21"])
        #expect(engine.pendingRequestIDs == ["other"])
        engine.removeAllPendingRequests()
        #expect(engine.pendingRequestIDs.isEmpty)
    }

    @Test func controlRecordsWithoutTimeApplyAtTheClock() throws {
        let engine = try Engine(catalog: Catalog())
        var events = engine.process(.control(ControlRecord(time: nil, operation: .add(F.circle(hysteresis: .naive)))))
        events += engine.process(F.fix("d1", 10, east: 300))
        events += engine.process(.control(ControlRecord(time: F.at(3), operation: .tick)))  // older than the clock
        events += engine.process(F.fix("d1", 11, east: 0))
        events += engine.finish()
        #expect(events.map { F.label($0) } == ["enter@11"])
        #expect(engine.clock == F.at(11))
    }

    @Test func invalidRequestsAreRefusedWithTheirPath() throws {
        let engine = try Engine(catalog: Catalog())
        #expect(throws: CatalogError.self) { try engine.add(F.circle(radius: -1)) }
        do {
            _ = try Engine(catalog: Catalog(requests: [F.circle("bad", radius: 0)]))
            Issue.record("expected an error")
        } catch let error as CatalogError {
            #expect(error.issues.map(\.path) == ["requests[0].trigger.radius"])
            #expect(error.issues.first?.requestID == "bad")
        }
    }

    @Test func perDeviceStateIsSparse() throws {
        // 200 fences on a line, 1,000 devices wandering far from them and 10 parked inside one.
        let fences = (0..<200).map { F.circle("f\($0)", center: F.offset(east: Double($0) * 1_000), radius: 100) }
        let engine = try Engine(catalog: Catalog(requests: fences))
        for device in 0..<1_000 {
            _ = engine.process(
                F.fix("far-\(device)", Double(device), F.offset(east: Double(device) * 200, north: 5_000)))
        }
        for device in 0..<10 {
            _ = engine.process(F.fix("in-\(device)", 2_000, east: 3_000))  // inside f3
            _ = engine.process(F.fix("in-\(device)", 2_001, east: 3_010))
        }
        let stored = engine.devices.records.reduce(0) { $0 + $1.count }
        #expect(engine.devices.count == 1_010)
        #expect(stored == 10)
    }
}
