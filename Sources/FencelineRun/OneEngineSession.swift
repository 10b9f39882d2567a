import Fenceline
import FencelineFormats
import Foundation

/// The run driver's session over one ``Engine``: what the engine does for a library caller, plus
/// the fast ways in for lines the driver hands over undecoded (a canonical fix's fields go to the
/// engine without a ``Reading`` being built; an NDJSON block is decoded in one pass and applied in
/// the next).
final class OneEngineSession: DrivenSession {
    let engine: Engine
    /// Whether the engine has a reorder window, which holds whole fixes.
    private let holdsReadings: Bool
    /// Whether lines stamped too far ahead are bad lines (the catalog's `maxFuture`).
    private let checksLead: Bool
    /// `--clock wall`: a line's lead is measured from the wall clock.
    var measuresLeadFromWallClock = false

    private func refusal(at time: Timestamp) -> String? {
        engine.futureRefusal(
            at: time, wallClock: measuresLeadFromWallClock ? Timestamp(seconds: Date().timeIntervalSince1970) : nil)
    }

    init(engine: Engine) {
        self.engine = engine
        holdsReadings = engine.holdsReadings
        checksLead = engine.maximumLead != nil
    }

    /// Reports the line as bad when it is stamped too far ahead (SPEC §12 `maxFuture`); it then
    /// moves nothing.
    @inline(__always)
    private func refusesLead(_ time: Timestamp?, line: Int, output: RunOutput) -> Bool {
        guard checksLead, let time, let refusal = refusal(at: time) else { return false }
        output.reject(LineError(field: "time", message: refusal), line: line)
        return true
    }

    func process(_ reading: Reading) -> [Event] { engine.process(reading) }
    func advance(to time: Timestamp) -> [Event] { engine.advance(to: time) }
    func finish(until: Timestamp?, keepingHeldReadings: Bool) -> [Event] {
        engine.finish(until: until, keepingHeldReadings: keepingHeldReadings)
    }
    func checkpoint() -> [UInt8] { engine.checkpoint() }
    var staleReadings: Int { engine.statistics.stale }
    var filteredReadings: Int { engine.statistics.filtered }

    /// A reading handed over whole: a GPX point, the last line of an input, or one a render or
    /// explain observer saw; a line number is not known here.
    func apply(_ reading: Reading, output: RunOutput) {
        if checksLead, let time = reading.time, let refusal = refusal(at: time) {
            output.reject(InputError(code: .invalidField, file: output.file, field: "time", message: refusal))
            return
        }
        output.applied(engine.process(reading))
    }

    func apply(line: UnsafeBufferPointer<UInt8>, number: Int, output: RunOutput) {
        if let fix = output.decoder.canonicalParts(line, motion: holdsReadings) {
            return apply(fix, in: line, number, output: output)
        }
        decodeInFull(line, number, output: output)
    }

    /// Applies a canonical fix line's fields, its device a range of `bytes`.
    @inline(__always)
    private func apply(
        _ fix: NDJSONReadingDecoder.CanonicalParts, in bytes: UnsafeBufferPointer<UInt8>, _ number: Int,
        output: RunOutput
    ) {
        if output.stopping && endsBeforeLaterInstant(fix.time, output: output) { return }
        if refusesLead(fix.time, line: number, output: output) { return }
        // Only a reorder window keeps the fix itself (its speed, heading and altitude too); it may
        // release a `respond` record it held, whose outcome is told at once.
        guard !holdsReadings else {
            output.applied(engine.process(fix.fix(in: bytes)))
            if !unansweredResponses.isEmpty { reportRefusedResponses(output: output) }
            return
        }
        output.applied(
            engine.process(
                deviceNamed: UnsafeBufferPointer(rebasing: bytes[fix.device]), time: fix.time,
                coordinate: fix.coordinate, accuracy: fix.accuracy))
    }

    /// While a stop waits for the end of the instant at the clock (``RunOutput/stopping``): a line
    /// of a later time ends the run before it is applied, as the first line after the cut (as
    /// does any line once the wait has timed out).
    private func endsBeforeLaterInstant(_ time: Timestamp?, output: RunOutput) -> Bool {
        if !output.stoppingTimedOut {
            guard let time, let clock = engine.clock, time > clock else { return false }
        }
        output.interrupt()
        return true
    }

    /// Decodes and applies a line that is not a canonical fix.
    private func decodeInFull(_ line: UnsafeBufferPointer<UInt8>, _ number: Int, output: RunOutput) {
        // Lines that give no reading (blank, a bad CSV header's rows) must not keep a stop waiting.
        if output.stoppingTimedOut { return output.interrupt() }
        do throws(LineError) {
            if let reading = try output.decoder.decode(line, number: number, afterCanonical: true) {
                if output.stopping && endsBeforeLaterInstant(reading.time, output: output) { return }
                if refusesLead(reading.time, line: number, output: output) { return }
                if case .control(let control) = reading, case .respond(let response) = control.operation {
                    unansweredResponses.append((response, number))
                }
                apply(reading, output: output)
                if !unansweredResponses.isEmpty { reportRefusedResponses(output: output) }
            }
        } catch {
            output.reject(error, line: number)
        }
    }

    /// `respond` lines read whose outcome the engine has not told yet (one, unless a reorder
    /// window holds them), with their line numbers.
    private var unansweredResponses: [(response: NotificationResponse, line: Int)] = []

    /// Reports each refused response as a bad line of its own line number: whether the notification
    /// exists and offers the action is known only once the engine applies the record.
    private func reportRefusedResponses(output: RunOutput) {
        for outcome in engine.takeResponseOutcomes() {
            guard let index = unansweredResponses.firstIndex(where: { $0.response == outcome.response }) else {
                continue
            }
            let line = unansweredResponses.remove(at: index).line
            if let refusal = outcome.refusal {
                output.summary.readings -= 1  // counted as applied when it was read
                output.reject(LineError(field: refusal.field, message: refusal.message), line: line)
            }
        }
    }

    /// Nothing waits: every line was applied as it came (a reorder window's held `respond`
    /// records are told when the run finishes).
    func endInput(output: RunOutput) {}

    /// The outcomes of `respond` records held by a reorder window until the end.
    func finishResponses(output: RunOutput) {
        if !unansweredResponses.isEmpty { reportRefusedResponses(output: output) }
    }

    /// A line of an NDJSON block as the first pass leaves it: a canonical fix's fields (the device
    /// a range of the block), or else where the line lies, to be decoded in full in its turn.
    private struct ParsedLine {
        var fix: NDJSONReadingDecoder.CanonicalParts?
        var start: Int
        var end: Int
    }

    /// The current block's lines, kept from block to block.
    @exclusivity(unchecked) private var parsedLines: [ParsedLine] = []

    /// Decodes and applies a block in two passes: the canonical fix lines' fields, then the engine
    /// over every line in order, a line of any other kind decoded in full in its turn (so a bad
    /// line is reported, and `--strict` stops, exactly where it would line by line); the events
    /// are encoded after the second pass.
    ///
    /// The split is for speed alone: a tight parse loop, then the engine, keeps each pass's code
    /// in cache; the blocks are small (128 KiB) so the block and its parsed lines are still in
    /// cache for the second pass.
    func apply(block: UnsafeBufferPointer<UInt8>, firstLine: Int, output: RunOutput) -> Int {
        parsedLines.removeAll(keepingCapacity: true)
        block.forEachLine { start, end in
            let fix = output.decoder.canonicalParts(
                UnsafeBufferPointer(rebasing: block[start..<end]), motion: holdsReadings)
            parsedLines.append(ParsedLine(fix: fix?.moved(by: start), start: start, end: end))
        }
        output.deferringEncoding {
            parsedLines.withUnsafeBufferPointer { lines in
                for (offset, line) in lines.enumerated() where output.keepsReading {
                    if let fix = line.fix {
                        apply(fix, in: block, firstLine + offset, output: output)
                    } else {
                        decodeInFull(
                            UnsafeBufferPointer(rebasing: block[line.start..<line.end]), firstLine + offset,
                            output: output)
                    }
                }
            }
        }
        return parsedLines.count
    }
}
