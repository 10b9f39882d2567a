import Fenceline
import TestSupport
import Testing

private typealias F = Fixtures

/// Issue 26, defect 3: a jump of the clock over many timer firings hands its events out as they
/// come (``Engine/spill``), in bounded chunks, and can be stopped; nothing is lost or doubled.
@Suite struct ClockJumpTests {
    static let catalog = Catalog(requests: [
        NotificationRequest(
            id: "every", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 60), repeats: true))),
        NotificationRequest(
            id: "quarter", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 900), repeats: true))),
        F.circle(hysteresis: .naive),
    ])

    /// A fix, then one a week later (about 11,000 firings between them), then the end.
    static let readings = [F.fix(0, east: 500), F.fix(7 * 86_400, east: 0), F.fix(7 * 86_400 + 60, east: 500)]

    /// Where two event lists first differ, for a readable failure (the lists are long).
    static func firstDifference(_ a: [Event], _ b: [Event]) -> String? {
        guard a != b else { return nil }
        let index = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        let left = index < a.count ? "\(a[index])" : "end"
        let right = index < b.count ? "\(b[index])" : "end"
        return "\(a.count) vs \(b.count) events; first difference at \(index): \(left) vs \(right)"
    }

    static func unspilled() throws -> [Event] {
        let engine = try Engine(catalog: catalog)
        return readings.flatMap { engine.process($0) } + engine.finish(until: F.at(8 * 86_400))
    }

    @Test func spilledEventsAreTheSameInBoundedChunks() throws {
        let expected = try Self.unspilled()
        #expect(expected.count > 11_000)
        let engine = try Engine(catalog: Self.catalog)
        var chunks: [Int] = []
        var events: [Event] = []
        engine.spill = { chunk in
            chunks.append(chunk.count)
            events += chunk
            return true
        }
        for reading in Self.readings { events += engine.process(reading) }
        events += engine.finish(until: F.at(8 * 86_400))
        #expect(chunks.count > 10)
        #expect(chunks.allSatisfy { $0 <= 1100 }, "\(chunks.max() ?? 0)")
        let difference = Self.firstDifference(events, expected)
        #expect(difference == nil)
        #expect(!engine.stoppedInJump)
    }

    /// Stopped mid-jump, the engine's checkpoint resumes from the instant it reached; applying the
    /// line that jumped again gives the rest, and the whole equals one uninterrupted run.
    @Test(arguments: [1, 3, 7])
    func aStoppedJumpResumesExactly(after stops: Int) throws {
        let expected = try Self.unspilled()
        let engine = try Engine(catalog: Self.catalog)
        var events: [Event] = []
        var chunks = 0
        engine.spill = { chunk in
            events += chunk
            chunks += 1
            return chunks < stops
        }
        events += engine.process(Self.readings[0])
        events += engine.process(Self.readings[1])
        #expect(engine.stoppedInJump)
        #expect(engine.clock.map { $0 < F.at(7 * 86_400) } == true)
        #expect(engine.process(Self.readings[2]).isEmpty, "a stopped engine moves no further")
        events += engine.finish(keepingHeldReadings: true)
        let resumed = try Engine(resuming: engine.checkpoint())
        events += resumed.process(Self.readings[1]) + resumed.process(Self.readings[2])
        events += resumed.finish(until: F.at(8 * 86_400))
        let difference = Self.firstDifference(events, expected)
        #expect(difference == nil)
    }
}
