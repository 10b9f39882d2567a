import CoreMetrics
import Fenceline
import FencelineFormats
import FencelineRun
import Foundation

/// Ingest: a batch of NDJSON lines applied to the engine, answered once it is committed.
extension ServiceEngine {
    /// The encoder of ingest answers, with the keys in the order every other answer has them.
    private static let answerEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// What ``apply(_:to:decoder:)`` did with a line.
    enum Applied {
        /// A canonical fix, applied without making a ``Reading``.
        case fix([Event])
        /// Any other line, decoded in full.
        case reading(Reading, [Event])

        var events: [Event] {
            switch self {
            case .fix(let events), .reading(_, let events): events
            }
        }
    }

    /// Applies one NDJSON line and returns what it released, or `nil` for a line with nothing to
    /// apply. A canonical fix takes the decoder's fast path, as `fenceline run` does (its device
    /// name is never made a String): most of ingest and of a journal's replay.
    static func apply(
        _ line: UnsafeBufferPointer<UInt8>, to engine: Engine, decoder: NDJSONReadingDecoder, wallClock: Bool = false,
        checksLead: Bool = true
    ) throws(LineError) -> Applied? {
        if !engine.holdsReadings, let fix = decoder.canonicalParts(line, motion: false) {
            if checksLead { try refuseLead(fix.time, engine: engine, wallClock: wallClock) }
            return .fix(
                engine.process(
                    deviceNamed: UnsafeBufferPointer(rebasing: line[fix.device]), time: fix.time,
                    coordinate: fix.coordinate, accuracy: fix.accuracy))
        }
        guard let reading = try decoder.decode(line) else { return nil }
        if checksLead { try refuseLead(reading.time, engine: engine, wallClock: wallClock) }
        return .reading(reading, engine.process(reading))
    }

    /// A line stamped further ahead than the catalog's `maxFuture` is a bad line, applied
    /// nowhere; with `--clock wall` it is compared with the wall clock (a journal replayed later
    /// holds only lines that passed, and finds them all in the past).
    @inline(__always)
    private static func refuseLead(_ time: Timestamp?, engine: Engine, wallClock: Bool) throws(LineError) {
        guard engine.maximumLead != nil, let time else { return }
        let now = wallClock ? Timestamp(seconds: Date().timeIntervalSince1970) : nil
        guard let refusal = engine.futureRefusal(at: time, wallClock: now) else { return }
        throw LineError(field: "time", message: refusal)
    }

    /// Applies a batch of NDJSON lines and commits it with its events. Under an idempotency key
    /// already used, the first answer is returned and nothing is applied. `json` is the answer as
    /// the response sends it, encoded once: the same bytes are kept for a repeat.
    func ingest(_ body: [UInt8], idempotencyKey: String?) async throws -> (
        answer: IngestAnswer, json: [UInt8], repeated: Bool
    ) {
        await waitWhilePaused()
        // A repeat of a batch still being written waits for it, then finds its answer.
        if let key = idempotencyKey, pendingKeys.contains(key) { await settle() }
        if let key = idempotencyKey, let first = try store.answer(forKey: key) {
            return (try JSONDecoder().decode(IngestAnswer.self, from: Data(first)), first, true)
        }
        // A line over the limit refuses the whole batch (413) before anything is applied.
        var longLine: Int?
        var counted = 0
        body.withUnsafeBufferPointer { bytes in
            bytes.forEachLine { start, end in
                counted += 1
                if longLine == nil && end - start > settings.maximumLineBytes { longLine = counted }
            }
        }
        if let longLine { throw LineTooLong(line: longLine, limit: settings.maximumLineBytes) }
        var answer = IngestAnswer(accepted: 0, skipped: 0, stale: 0, errors: [])
        // The lines applied, joined by newlines, as the journal keeps them.
        var journal: [UInt8] = []
        journal.reserveCapacity(body.count)
        var journaled = 0
        var events: [Event] = []
        let staleBefore = engine.statistics.stale
        let filteredBefore = engine.statistics.filtered
        var number = 0
        // A clock jump hands its events out as it goes (the engine's spill), so that one far
        // `tick` cannot fill memory before the batch is refused. Only while the lines are
        // applied: other calls on the actor run while this one awaits its commit, and their
        // events must not land here.
        let spilled = SpilledEvents()
        engine.spill = { chunk in
            spilled.events += chunk
            return spilled.events.count <= Self.maximumBatchEvents
        }
        var overflowLine: Int?
        var appliedStale = 0
        body.withUnsafeBufferPointer { bytes in
            bytes.forEachLine { start, end in
                number += 1
                guard overflowLine == nil else { return }
                let line = UnsafeBufferPointer(rebasing: bytes[start..<end])
                let staleBeforeLine = engine.statistics.stale
                do throws(LineError) {
                    guard let done = try Self.apply(line, to: engine, decoder: decoder, wallClock: settings.wallClock)
                    else { return }
                    events += spilled.events
                    spilled.events = []
                    events += done.events
                    if engine.stoppedInJump || events.count > Self.maximumBatchEvents {
                        overflowLine = number
                        return
                    }
                    if !journal.isEmpty { journal.append(0x0A) }
                    journal.append(contentsOf: line)
                    journaled += 1
                    // A refused response is a bad line, but journaled all the same: it moved the
                    // clock (which notification it names depends on the timers due before it),
                    // and a replay or the export must move it there too.
                    if case .reading(.control(let control), _) = done, case .respond(let response) = control.operation {
                        // This line's outcome (a reorder window may hold it: then it is logged
                        // when the window lets it go, see `logHeldResponses`).
                        var outcomes = engine.takeResponseOutcomes()
                        let own = outcomes.lastIndex { $0.response == response }
                        let refusal = own.flatMap { outcomes.remove(at: $0).refusal }
                        logHeldResponses(outcomes)
                        if let refusal { throw LineError(field: refusal.field, message: refusal.message) }
                    } else if engine.holdsReadings {
                        logHeldResponses(engine.takeResponseOutcomes())
                    }
                    // A stale reading is skipped (SPEC §4), counted under `stale`, not accepted.
                    if engine.statistics.stale == staleBeforeLine { answer.accepted += 1 } else { appliedStale += 1 }
                } catch {
                    let field = error.field.map { "field \"\($0)\": " } ?? ""
                    answer.errors.append(.init(line: number, reason: field + error.message))
                }
            }
        }
        engine.spill = nil
        if let overflowLine {
            // Nothing of the batch is kept: the engine goes back to what the store holds, once
            // the batches applied before it are written; nothing is applied meanwhile.
            paused = true
            defer { resume() }
            await settle()
            try reload()
            throw TooManyEvents(line: overflowLine, limit: Self.maximumBatchEvents)
        }
        answer.skipped = answer.errors.count
        answer.stale = engine.statistics.stale - staleBefore
        // As the CLI's summary counts readings: every valid line, stale ones too.
        metrics.readings.increment(by: answer.accepted + appliedStale)
        metrics.skipped.increment(by: answer.skipped)
        metrics.stale.increment(by: answer.stale)
        metrics.filtered.increment(by: engine.statistics.filtered - filteredBefore)
        answer.firstSeq = events.first?.sequence
        answer.lastSeq = events.last?.sequence
        let answerBytes = Array(try Self.answerEncoder.encode(answer))
        try await commit(
            journal: journal, lines: journaled, events: events, idempotency: idempotencyKey.map { ($0, answerBytes) })
        return (answer, answerBytes, false)
    }
}

/// Where the engine's spill puts a clock jump's events while a line is applied.
final class SpilledEvents {
    var events: [Event] = []
}
