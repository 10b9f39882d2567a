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
        #expect(fork.hotSlots.baseAddress == engine.hotSlots.baseAddress)
        #expect(!engine.index.queryStorage.isEmpty)
        #expect(fork.index.queryStorage == engine.index.queryStorage)
        _ = fork.process(.control(ControlRecord(time: F.at(1), operation: .removePending(["gate"]))))
        #expect(fork.hotSlots.baseAddress != engine.hotSlots.baseAddress)
        #expect(fork.hotSlots.baseAddress == fork.hot.withUnsafeBufferPointer { $0.baseAddress })
        #expect(engine.hotSlots.baseAddress == engine.hot.withUnsafeBufferPointer { $0.baseAddress })
        var kept = engine.process(F.fix("d1", 2, east: 0))
        kept += engine.finish()
        var gone = fork.process(F.fix("d1", 2, east: 0))
        gone += fork.finish()
        #expect(kept.map { F.label($0, withRequest: true) }.contains("gate.enter@2"))
        #expect(!gone.map { F.label($0, withRequest: true) }.contains("gate.enter@2"))
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
