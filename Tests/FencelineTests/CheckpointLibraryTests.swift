import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Fenceline

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

    /// Forged values behind a good checksum are refused: counters at which the engine's next
    /// `+= 1` would overflow, times far beyond any run, and more devices × accuracy thresholds than
    /// the file could describe (which used to make the reader grow a table for minutes).
    @Test func forgedValuesBehindAGoodChecksumAreRefused() throws {
        let engine = try Engine(catalog: Catalog(requests: Self.requests))
        for reading in Self.readings().prefix(50) { _ = engine.process(reading) }
        let state = engine.checkpoint()
        let payload = Array(state[(Engine.checkpointMagic.count + 20)...])
        func forged(at offset: Int, _ value: UInt64) -> [UInt8] {
            var copy = payload
            withUnsafeBytes(of: value.littleEndian) {
                for (index, byte) in $0.enumerated() { copy[offset + index] = byte }
            }
            return Engine.sealed(copy)
        }
        #expect(Engine.sealed(payload) == state)
        // The clock (a flag and 8 bytes), five counts, the next seq; the three statistics, the
        // apply sequence, the next token.
        let nextSequence = 9 + 5 * 8
        for offset in [1, nextSequence, nextSequence + 8, nextSequence + 32, nextSequence + 40] {
            for value in [UInt64(Int64.max), UInt64(1) << 63, UInt64(bitPattern: Int64.min + 1)] {
                #expect(throws: CheckpointError.self, "offset \(offset), \(value)") {
                    try Engine(resuming: forged(at: offset, value))
                }
            }
        }
        var writer = CheckpointWriter()
        writer.write(UInt8(0))  // no clock
        for _ in 0..<5 { writer.write(0) }
        writer.write(1)  // next seq
        for _ in 0..<3 { writer.write(0) }
        for _ in 0..<3 { writer.write(UInt64(0)) }
        writer.writeCount(0)  // categories
        writer.write(Hysteresis.default)
        for _ in 0..<3 { writer.writeCount(0) }  // start catalog, untimed records, given catalog
        writer.write(each: (0..<4000).map { "d\($0)" }) { $0.write($1) }
        writer.write(each: [Double.infinity] + (1..<4000).map(Double.init)) { $0.write($1) }
        let start = Date()
        #expect(throws: CheckpointError.self) { try Engine(resuming: Engine.sealed(writer.bytes)) }
        #expect(Date().timeIntervalSince(start) < 2)
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

    /// An engine that checkpoints again and again keeps the encodings of its requests; its
    /// checkpoints must be byte for byte those of an engine that encodes everything afresh, across
    /// requests added, replaced and removed between them, also when written in parts.
    @Test func keptEncodingsWriteTheSameCheckpoints() throws {
        let readings = Self.readings()
        let kept = try Engine(catalog: Catalog(requests: Self.requests))
        let afresh = try Engine(catalog: Catalog(requests: Self.requests))
        // Given its encodings from outside (as the service makes them on another thread).
        let aside = try Engine(catalog: Catalog(requests: Self.requests))
        aside.keepsCheckpointEncodings = true
        // In parts put together elsewhere (as the service writes them).
        let parts = try Engine(catalog: Catalog(requests: Self.requests))
        var compared = 0
        for (index, reading) in readings.enumerated() {
            for engine in [kept, afresh, aside, parts] {
                _ = engine.process(reading)
                switch index {
                case 40: try engine.add(Fixtures.circle("late", radius: 90))
                case 80: try engine.add(Fixtures.circle("gate", radius: 300, hysteresis: .naive))  // replaces
                case 120: engine.removePendingRequests(withIdentifiers: ["slow", "late"])
                case 160: try engine.add(Fixtures.circle("slow", radius: 60))
                // A catalog given mid-run (as a restart's --triggers is): hashed for the checkpoints.
                case 100:
                    try engine.add(
                        Catalog(requests: [Fixtures.circle("gate", radius: 120), Fixtures.circle("yard", radius: 40)]),
                        keepingIdenticalRequests: true)
                default: break
                }
            }
            guard index % 7 == 0 || (40...41).contains(index) || (80...81).contains(index) else { continue }
            let state = kept.checkpoint()
            afresh.checkpointCache = CheckpointCache()
            #expect(state == afresh.checkpoint(), "after reading \(index)")
            let prepared = aside.checkpointPreparation()?.make()
            // Given back before the checkpoint, or after it (made stale by it: the digests are
            // then the checkpoint's own).
            if compared % 2 == 0, let prepared { aside.keep(prepared) }
            #expect(state == aside.checkpoint(), "after reading \(index), encoded aside")
            if compared % 2 == 1, let prepared { aside.keep(prepared) }
            #expect(aside.checkpointPreparation() == nil, "nothing new since")
            #expect(state == parts.checkpointParts().assembled(), "after reading \(index), in parts")
            compared += 1
        }
        #expect(compared > 30)
        #expect(kept.checkpointCache.requests.contains { !$0.isEmpty })
    }

    /// Parts taken between two readings are put together on other threads while the engine goes
    /// on, and again after it has finished: each must still be its moment's checkpoint, byte for
    /// byte, though the requests' states change after it (a non-repeating region done for a
    /// device, a one-shot timer fired, a repeating one set again, a request removed, one added, a
    /// catalog given with new digests).
    @Test func partsPutTogetherLaterAreTheCheckpointOfTheirMoment() throws {
        let requests =
            Self.requests + [
                Fixtures.circle("once", radius: 150) { $0.repeats = false },
                NotificationRequest(
                    id: "alarm",
                    trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 30), repeats: false))),
            ]
        let engine = try Engine(catalog: Catalog(requests: requests))
        let assembled = Mutex<[Int: [UInt8]]>([:])
        let group = DispatchGroup()
        var expected: [Int: [UInt8]] = [:]
        var taken: [Int: CheckpointParts] = [:]
        var firstStates: [UInt8] = []
        for (index, reading) in Self.readings().enumerated() {
            _ = engine.process(reading)
            switch index {
            case 90: engine.removePendingRequests(withIdentifiers: ["slow"])
            case 120:
                try engine.add(
                    Catalog(requests: [Fixtures.circle("gate", radius: 120), Fixtures.circle("yard", radius: 40)]),
                    keepingIdenticalRequests: true)
            case 150: try engine.add(Fixtures.circle("late", radius: 90) { $0.repeats = false })
            default: break
            }
            guard index % 10 == 0 else { continue }
            let parts = engine.checkpointParts()
            if firstStates.isEmpty { firstStates = parts.states.encoded().bytes }
            expected[index] = engine.checkpoint()
            taken[index] = parts
            DispatchQueue.global().async(group: group) {
                let bytes = parts.assembled()
                assembled.withLock { $0[index] = bytes }
            }
        }
        group.wait()
        let results = assembled.withLock { $0 }
        #expect(results.count == expected.count)
        for (index, state) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(results[index] == state, "parts taken after reading \(index), put together meanwhile")
            #expect(taken[index]?.assembled() == state, "parts taken after reading \(index), put together at the end")
        }
        // The requests' states did move on after the first parts were taken.
        #expect(engine.checkpointParts().states.encoded().bytes != firstStates)
        #expect(!engine.isPending("alarm"), "the one-shot timer fired")
    }
}
