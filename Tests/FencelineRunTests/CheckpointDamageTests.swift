import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Logging
import TestSupport
import Testing

/// SPEC §10: a file that is not a checkpoint, is truncated or damaged is refused with a clear
/// error; reading one never traps, whatever its bytes say.
@Suite struct CheckpointDamageTests {
    static let magicLength = ForgedCheckpoint.magicLength
    static let headerLength = ForgedCheckpoint.headerLength

    /// A checkpoint holding a little of everything: requests of every kind, devices with region and
    /// beacon records, timers, delivered notifications, readings held by a reorder window.
    static func richCheckpoint() throws -> [UInt8] {
        var generator = SplitMix(state: 5)
        let (catalog, lines) = try CheckpointContinuityTests.generatedStream(using: &generator)
        var options = RunPipeline.Options()
        options.reorderWindow = TimeSpan(seconds: 6)
        let path = Scratch.root.appendingPathComponent("rich-\(UUID().uuidString).ndjson")
        try Data(lines[..<200].map { $0 + "\n" }.joined().utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let pipeline = RunPipeline(
            catalog: catalog, catalogDecoder: CatalogDecoder(), options: options, encoder: NDJSONEventEncoder(),
            logger: Logger(label: "test"))
        pipeline.checkpointing = true
        _ = try pipeline.run(inputs: [path.path], write: { _ in }, report: { _ in })
        let state = try #require(pipeline.lastCheckpoint)
        let summary = try Engine.checkpointSummary(of: state)
        #expect(summary.devices == 6 && summary.heldReadings > 0 && summary.delivered > 0 && summary.pendingTimers > 0)
        return state
    }

    /// The checksum recomputed over a changed payload, so the reader itself meets the change.
    static func resealed(_ bytes: [UInt8]) -> [UInt8] { ForgedCheckpoint.resealed(bytes) }

    /// Resumes from `bytes`: either a ``CheckpointError`` or an engine that then answers and runs
    /// on readings stamped at its clock. (A forged state may describe an engine whose next clock
    /// move fires a repeating timer a billion times over, as a real input may: that is the
    /// engine's work, not the reader's, so the clock does not move here.)
    static func tryResume(_ bytes: [UInt8]) -> CheckpointError? {
        do {
            let engine = try Engine(
                resuming: bytes, configuration: Engine.Configuration(reorderWindow: TimeSpan(seconds: 6)))
            _ = engine.checkpoint()
            _ = engine.deliveredNotifications
            for request in engine.pendingRequests { _ = engine.nextTriggerDate(forRequest: request.id) }
            if let clock = engine.clock {
                let beacon = BeaconIdentity(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 1, minor: 2)
                for index in 0..<8 {
                    let east = Double(index) * 60 - 200
                    _ = engine.process(
                        .fix(Fix(device: "d\(index % 6)", time: clock, coordinate: Fixtures.offset(east: east))))
                    _ = engine.process(
                        .sighting(
                            BeaconSighting(
                                device: "d\(index % 6)", time: clock, beacon: beacon, rssi: -60 - Double(index))))
                }
            }
            return nil
        } catch let error as CheckpointError {
            return error
        } catch {
            Issue.record("not a CheckpointError: \(error)")
            return nil
        }
    }

    @Test func theCheckpointItselfResumes() throws {
        let state = try Self.richCheckpoint()
        #expect(Self.tryResume(state) == nil)
        #expect(Self.resealed(state) == state)
    }

    @Test func everyTruncationIsRefused() throws {
        let state = try Self.richCheckpoint()
        for length in 0..<state.count {
            let error = Self.tryResume(Array(state[..<length]))
            #expect(error != nil, "a checkpoint cut to \(length) bytes was accepted")
            if length < Self.magicLength { #expect(error?.code == .notACheckpoint) }
            if length >= Self.headerLength { #expect(error?.code == .damaged) }
        }
    }

    @Test func anotherVersionOrAnotherFileIsRefused() throws {
        var state = try Self.richCheckpoint()
        state[Self.magicLength] = 9
        #expect(Self.tryResume(state)?.code == .unsupportedVersion)
        #expect(Self.tryResume(Array(#"{"device":"a","time":1,"lat":1,"lon":2}"#.utf8))?.code == .notACheckpoint)
        #expect(Self.tryResume([])?.code == .notACheckpoint)
    }

    /// A flipped bit anywhere in the state is caught by the checksum.
    @Test func flippedBitsAreCaughtByTheChecksum() throws {
        let state = try Self.richCheckpoint()
        var generator = SplitMix(state: 21)
        for _ in 0..<1_000 {
            var damaged = state
            let position = Int.random(in: Self.headerLength..<state.count, using: &generator)
            damaged[position] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            #expect(Self.tryResume(damaged)?.code == .damaged)
        }
    }

    /// Behind a good checksum, thousands of altered states (flipped bits, bytes set to 0xFF or 0,
    /// huge counts, bytes dropped or repeated) are refused or resumed, never trusted into a trap.
    @Test(arguments: 0..<4)
    func alteredStatesBehindAGoodChecksumNeverTrap(round: Int) throws {
        let state = try Self.richCheckpoint()
        var generator = SplitMix(state: UInt64(round) &+ 1000)
        var refused = 0
        for _ in 0..<1_000 {
            var payload = Array(state[Self.headerLength...])
            let position = Int.random(in: 0..<payload.count, using: &generator)
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: payload[position] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
            case 1:
                for offset in position..<min(payload.count, position + 4) { payload[offset] = 0xFF }
            case 2:
                for offset in position..<min(payload.count, position + 8) { payload[offset] = 0 }
            case 3: payload.remove(at: position)
            default: payload.insert(payload[position], at: position)
            }
            var damaged = Array(state[..<Self.headerLength]) + payload
            // The length field follows the payload, so the reader gets past the header.
            withUnsafeBytes(of: UInt64(payload.count).littleEndian) { raw in
                for (offset, byte) in raw.enumerated() { damaged[Self.magicLength + 4 + offset] = byte }
            }
            if Self.tryResume(Self.resealed(damaged)) != nil { refused += 1 }
        }
        #expect(refused > 300, "most alterations should be noticed")
    }

    /// What `Tools/fuzz` found (Data/fuzz-regressions): each is refused, none traps.
    @Test func fuzzFindingsAreRefused() throws {
        let folder = Fixtures.dataDirectory.appendingPathComponent("fuzz-regressions")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".ckpt") }
        #expect(files.count >= 7)
        for file in files {
            let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(file)))
            if file.hasSuffix("-loads.ckpt") {
                // Findings of the harness, not the reader: a file it must read, written back in
                // the current version, which then reads back unchanged.
                let rewritten = try Engine(resuming: bytes).checkpoint()
                #expect(try Engine.checkpointSummary(of: rewritten).version == Engine.checkpointVersion, "\(file)")
                #expect(try Engine(resuming: rewritten).checkpoint() == rewritten, "\(file)")
            } else {
                #expect(throws: CheckpointError.self, "\(file)") { try Engine(resuming: bytes) }
            }
        }
    }
}
