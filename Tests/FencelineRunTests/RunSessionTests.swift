import Fenceline
import FencelineFormats
import FencelineRun
import TestSupport
import Testing

/// The two sessions behind ``RunSession`` as a library caller drives them: reading by reading,
/// with the clock advanced now and then, give the same numbered events.
@Suite struct RunSessionTests {
    /// Drives `session` over `readings`, advancing the clock to a quarter second before each reading
    /// whose index is in `marks` (as a live feed's wall clock does between readings), and returns
    /// every event.
    static func drive(_ session: some RunSession, _ readings: [Reading], advancingBefore marks: Set<Int>) -> [Event] {
        var events: [Event] = []
        for (index, reading) in readings.enumerated() {
            if marks.contains(index), let time = reading.time {
                events += session.advance(to: time.advanced(by: TimeSpan(seconds: -0.25)))
            }
            events += session.process(reading)
        }
        return events + session.finish(until: nil, keepingHeldReadings: false)
    }

    @Test(arguments: 0..<8)
    func shardedSessionGivesOneEnginesEvents(seed: Int) throws {
        var generator = SplitMix(state: UInt64(seed) &* 0x2545_F491 &+ 7)
        let (catalog, lines) = try CheckpointContinuityTests.generatedStream(using: &generator)
        let decoder = NDJSONReadingDecoder(
            requests: NDJSONReadingDecoder.RequestContext(decoder: CatalogDecoder(), catalog: catalog))
        let readings = lines.compactMap { line in
            Array(line.utf8).withUnsafeBufferPointer { try? decoder.decode($0) } ?? nil
        }
        #expect(readings.count > 250)
        let marks = Set((0..<10).map { _ in Int.random(in: 0..<readings.count, using: &generator) })
        let window = seed.isMultiple(of: 2) ? TimeSpan.zero : TimeSpan(seconds: 3)
        let configuration = Engine.Configuration(reorderWindow: window)
        let one = Self.drive(try Engine(catalog: catalog, configuration: configuration), readings, advancingBefore: [])
        let sharded = Self.drive(
            try ShardedSession(catalog: catalog, configuration: configuration, threads: 1 + seed % 3), readings,
            advancingBefore: [])
        #expect(!one.isEmpty)
        #expect(sharded == one)
        #expect(sharded.map(\.sequence) == Array(1...one.count))
        // Advancing the clock between readings changes when events come out, never which or in
        // what order.
        guard window == .zero else { return }
        let advanced = Self.drive(
            try ShardedSession(catalog: catalog, configuration: configuration, threads: 2), readings,
            advancingBefore: marks)
        let advancedOne = Self.drive(
            try Engine(catalog: catalog, configuration: configuration), readings, advancingBefore: marks)
        #expect(advanced == advancedOne)
    }

    @Test func aShardedSessionRefusesToCheckpoint() throws {
        let session = try ShardedSession(catalog: Catalog(), threads: 2)
        #expect(throws: ShardedSession.CheckpointUnavailable.self) { try session.checkpoint() }
        let engine: any RunSession = try Engine(catalog: Catalog())
        #expect(try !engine.checkpoint().isEmpty)
    }
}
