import Fenceline
import Foundation
import Synchronization
import TestSupport
import Testing

/// The README's library example, verbatim, and the instant-closing rules of the API.
@Suite struct LibraryExampleTests {
    @Test func readmeExampleEntersTheGate() throws {
        let gate = NotificationRequest(
            id: "gate",
            content: NotificationContent(title: "Gate", body: "{device} {event}"),
            trigger: .region(
                RegionTrigger(geometry: .circle(center: Coordinate(latitude: 52.37, longitude: 4.89), radius: 150))))
        let engine = try Engine(catalog: Catalog(requests: [gate]))

        let now = Timestamp(rfc3339: "2026-03-02T08:00:00Z")!
        var events = engine.process(
            .fix(Fix(device: "truck-17", time: now, coordinate: Coordinate(latitude: 52.38, longitude: 4.89))))
        events += engine.process(
            .fix(
                Fix(
                    device: "truck-17", time: now.advanced(by: TimeSpan(seconds: 10)),
                    coordinate: Coordinate(latitude: 52.3701, longitude: 4.8901), accuracy: 8)))
        events += engine.advance(to: now.advanced(by: TimeSpan(seconds: 10)))  // closes that instant
        let lines = events.map { "\($0.kind) \($0.requestID) \($0.device ?? "-") \($0.time.rfc3339)" }
        #expect(lines == ["enter gate truck-17 2026-03-02T08:00:10Z"])
        #expect(events.first?.content.body == "truck-17 enter")
    }

    /// `process(_:)` and `produce(_:)` of a bare fix give what the same fix as a reading gives,
    /// with and without a reorder window (which the bare call must not bypass).
    @Test(arguments: [0, 3.0]) func aBareFixIsProcessedAsItsReading(window: Double) throws {
        let requests = [Fixtures.circle(), Fixtures.circle("naive", hysteresis: .naive)]
        let configuration = Engine.Configuration(reorderWindow: TimeSpan(seconds: window))
        let wrapped = try Engine(catalog: Catalog(requests: requests), configuration: configuration)
        let bare = try Engine(catalog: Catalog(requests: requests), configuration: configuration)
        var fromWrapped: [Event] = []
        var fromBare: [Event] = []
        // Out of order by a second now and then, and one stale fix.
        let steps: [(Double, Double)] = [(0, 300), (2, 120), (1, 200), (3, 0), (5, -20), (4, 10), (30, 400), (2, 0)]
        for (seconds, east) in steps {
            let reading = Fixtures.fix(seconds, east: east)
            guard case .fix(let fix) = reading else { continue }
            fromWrapped += wrapped.process(reading)
            fromBare += bare.process(fix)
        }
        fromWrapped += wrapped.finish(until: Fixtures.at(120))
        fromBare += bare.finish(until: Fixtures.at(120))
        #expect(fromBare == fromWrapped)
        #expect(fromBare.count >= 4)
        #expect(bare.statistics == wrapped.statistics)
    }

    @Test func processHoldsTheEventsOfItsOwnInstantUntilTimeMovesOn() throws {
        let engine = try Engine(catalog: Catalog(requests: [Fixtures.circle(hysteresis: .naive)]))
        #expect(engine.process(Fixtures.fix(0, east: 300)).isEmpty)
        #expect(engine.process(Fixtures.fix(1, east: 0)).isEmpty)  // the enter at 1 s waits for its instant to close
        let next = engine.process(Fixtures.fix(2, east: 0))
        #expect(next.map { Fixtures.label($0) } == ["enter@1"])
        // advance(to:) fires the timers due at or before it and closes that instant.
        let exitEngine = try Engine(catalog: Catalog(requests: [Fixtures.circle()]))
        _ = exitEngine.process(Fixtures.fix(0, east: 0))
        _ = exitEngine.process(Fixtures.fix(5, east: 300))
        #expect(exitEngine.advance(to: Fixtures.at(24.9)).isEmpty)
        #expect(exitEngine.advance(to: Fixtures.at(25)).map { Fixtures.label($0) } == ["exit@25"])
        #expect(exitEngine.clock == Fixtures.at(25))
        #expect(exitEngine.advance(to: Fixtures.at(10)).isEmpty)
        #expect(exitEngine.clock == Fixtures.at(25))  // never back
    }
}

@Suite struct ValueLayoutTests {
    /// A fix travels through the hot path by value: it must not carry a control record's request inline.
    @Test func readingsStaySmall() {
        #expect(
            MemoryLayout<Reading>.size <= MemoryLayout<Fix>.size + 8, "Reading is \(MemoryLayout<Reading>.size) bytes")
    }
}

/// The concurrency face: a session fed from tasks, its events read from an `AsyncSequence`.
@Suite struct EngineSessionTests {
    static let requests = [
        Fixtures.circle("gate", hysteresis: .naive),
        Fixtures.circle("slow", radius: 200) {
            $0.notifyOnDwell = true; $0.dwell = TimeSpan(seconds: 30)
        },
    ]

    static func readings(_ range: Range<Int>) -> [Reading] {
        range.map { Fixtures.fix("d\($0 % 3)", Double($0) * 4, east: Double(($0 * 37) % 500) - 100) }
    }

    /// The README's session example, verbatim between the markers.
    @Test func readmeSessionExampleRuns() async throws {
        let gate = Fixtures.circle("gate", hysteresis: .naive)
        let readings = Self.readings(0..<30)
        let end = Fixtures.at(200)
        let lines = Mutex<[String]>([])
        @Sendable func print(_ items: any Sendable...) {
            lines.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
        }
        // README begin
        let session = try EngineSession(catalog: Catalog(requests: [gate]))
        let consumer = Task {
            for await event in session.events { print(event.sequence, event.kind, event.requestID) }
        }
        await session.process(readings)  // any Sequence of Reading, from any task
        let state = await session.checkpoint()  // keep it: EngineSession(resuming: state) goes on exactly
        await session.finish(until: end)  // fires what is due, then ends `events`
        await consumer.value
        // README end
        let printed = lines.withLock { $0 }
        #expect(!state.isEmpty)
        #expect(printed.first == "1 enter gate" || printed.first == "1 exit gate")
        #expect(printed.count >= 3)
        // The lines above are the README's, so the README's example compiles and runs.
        let source = try String(contentsOfFile: #filePath, encoding: .utf8).split(separator: "\n")
        let first = source.firstIndex { $0.hasSuffix("// README begin") }!
        let last = source.firstIndex { $0.hasSuffix("// README end") }!
        let example = source[(first + 1)..<last].map { $0.dropFirst(8) }.joined(separator: "\n")
        let readme = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("```swift\n" + example + "\n```"))
    }

    /// The README's session example, and the same events as the synchronous engine, in order,
    /// through a checkpoint taken mid-stream and a second session resumed from it.
    @Test func sessionEventsArriveInOrderAndGoOnFromACheckpoint() async throws {
        let catalog = Catalog(requests: Self.requests)
        let engine = try Engine(catalog: catalog)
        var expected = Self.readings(0..<60).flatMap { engine.process($0) }
        expected += engine.finish(until: Fixtures.at(400))

        let session = try EngineSession(catalog: catalog)
        let consumer = Task {
            var seen: [Event] = []
            for await event in session.events { seen.append(event) }
            return seen
        }
        await session.process(Self.readings(0..<25))
        let state = await session.checkpoint()
        await session.finish()
        let before = await consumer.value

        let resumed = try EngineSession(resuming: state)
        let rest = Task {
            var seen: [Event] = []
            for await event in resumed.events { seen.append(event) }
            return seen
        }
        await resumed.process(Self.readings(25..<60))
        await resumed.finish(until: Fixtures.at(400))
        let after = await rest.value
        // The first session's finish released the open instant; the resumed one kept it open.
        #expect(after == Array(expected.drop { $0.sequence <= after.first!.sequence - 1 }))
        #expect(before == Array(expected.prefix(before.count)))
        #expect(after.count >= 4 && before.count >= 2)
        #expect(after.last == expected.last)
    }
}
