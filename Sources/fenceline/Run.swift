import ArgumentParser
import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Logging
import Synchronization

/// `fenceline run`: evaluate a catalog over readings and write the events.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the triggers of a catalog over readings and write the events.",
        discussion: """
            Reads readings from the files in order, or from standard input when no file or - is \
            given: NDJSON (SPEC §3.1, the default), CSV with a header, GPX 1.0/1.1 or NMEA 0183, \
            plain or gzip-compressed. The format comes from each file's extension (.ndjson .jsonl \
            .json, .csv, .gpx, .nmea .nme; a trailing .gz is looked through), else from its first \
            character ({ NDJSON, < GPX, $ or ! NMEA, else CSV), unless --input-format says. GPX \
            points take their device from the track's name, else the file name; NMEA fixes from \
            the file name; --device names both. `fenceline readings` shows what a file reads as.

            Events go to standard output (or -o FILE) as NDJSON (SPEC §8), text for people, APNs \
            request bodies, or one GeoJSON FeatureCollection of points for a map (--format).

            Bad lines are skipped and reported on stderr as file:line: reason; with --strict the \
            first one stops the run with exit code 65 after writing the events before it. The run \
            ends with a one-line summary on stderr. Reading files with stderr on a terminal shows \
            progress (percent read, readings, readings/s, events) until the end.

            Examples:
              fenceline run --triggers Data/scenarios/real-drive-visnjan/triggers.json \\
                  Data/scenarios/real-drive-visnjan/readings.ndjson
              fenceline run --triggers fences.geojson --format text day1.ndjson \\
                  day2.ndjson.gz
              fenceline run --triggers fences.json --format geojson -o events.geojson \\
                  ride.gpx
              fenceline run --triggers fences.json --device truck-17 --format text \\
                  receiver.nmea
              zcat trace.ndjson.gz | fenceline run --triggers fences.json \\
                  --reorder-window 5 -
              fenceline run --triggers fences.json --until 2026-03-02T18:00:00Z \\
                  --strict trace.csv
              tail -f live.ndjson | fenceline run --triggers fences.json --clock wall -
              fenceline run --triggers catalog.json --format apns \\
                  --state-out state.json trace.ndjson
            """
    )

    @OptionGroup var input: InputOptions

    @Option(
        help: ArgumentHelp(
            "Output format: ndjson (SPEC §8 events), text, apns (APNs request bodies) or geojson (a FeatureCollection).",
            valueName: "format"))
    var format: EventFormat = .ndjson

    @Option(
        help: ArgumentHelp(
            "The device id of GPX and NMEA readings (default: a GPX track's name, else the file name).",
            valueName: "id"))
    var device: String?

    @Flag(help: "Stop at the first bad line with exit code 65 instead of skipping it.")
    var strict = false

    @Option(
        help: ArgumentHelp(
            "What moves the clock: event (reading times only) or wall (also the wall clock, each second; for live input).",
            valueName: "mode"))
    var clock: ClockMode = .event

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Report at most this many bad lines one by one, then only count them.", valueName: "n"))
    var maxErrors = 20

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Write events to this file instead of standard output (`-`: standard output).", valueName: "file"))
    var output: String?

    @Option(
        help: ArgumentHelp(
            "At the end, write the pending and delivered notifications to this file as JSON "
                + "(`-`: standard output, with -o FILE for the events).", valueName: "file"))
    var stateOut: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Threads working in parallel, devices sharded across their engines; the output is the same as with one.",
            valueName: "n"))
    var threads = 1

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Keep at most this many delivered notifications per device (oldest dropped).", valueName: "n"))
    var deliveredLimit = 64

    @Option(
        help: ArgumentHelp(
            "At the end (or on SIGINT or SIGTERM, after the line at hand or its instant), write the engine's whole state to this file, to go on with --resume.",
            valueName: "file"))
    var checkpoint: String?

    @Option(
        help: ArgumentHelp(
            "Start from the state in this checkpoint; --triggers is then optional and its requests are added (those identical to the checkpoint's go on as they were).",
            valueName: "file"))
    var resume: String?

    @Flag(help: "Print neither catalog warnings, progress nor the summary line.")
    var quiet = false

    @Flag(help: "Show progress on stderr even when it is not a terminal or the input is standard input.")
    var progress = false

    @Flag(
        help: ArgumentHelp(
            "At the end, report on stderr the wall and CPU time from the first applied reading to the end (for Tools/bench).",
            visibility: .hidden))
    var timings = false

    func validate() throws {
        guard maxErrors >= 0 else { throw ValidationError("--max-errors must be ≥ 0") }
        if let device, device.isEmpty { throw ValidationError("--device must not be empty") }
        guard deliveredLimit >= 1 else { throw ValidationError("--delivered-limit must be ≥ 1") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be in 1…64") }
        if threads > 1 && stateOut != nil {
            throw ValidationError(
                "--state-out needs --threads 1: each engine keeps its own delivered list and their order cannot be merged"
            )
        }
        if threads > 1 && clock == .wall { throw ValidationError("--clock wall needs --threads 1") }
        if resume == nil { _ = try input.catalogPath }
        if let stateOut, stateOut.isEmpty { throw ValidationError("--state-out needs a file name") }
        // The events go to standard output unless -o names a file: the state after them would
        // read as one more event.
        if stateOut == "-" && (output == nil || output == "-") {
            throw ValidationError(
                "--state-out - writes standard output, where the events go: "
                    + "give -o FILE for the events, or --state-out FILE")
        }
        if let checkpoint, checkpoint.isEmpty || checkpoint == "-" {
            throw ValidationError("--checkpoint needs a file name")
        }
    }

    func run() async throws {
        // The checkpoint may replace the one resumed: that is read whole first, then replaced atomically.
        let inputs = input.inputs + [input.triggers].compactMap { $0 }
        try OutputSafety.refuseOutputsOntoInputs(
            [("-o", output), ("--state-out", stateOut)], inputs: inputs + [resume].compactMap { $0 })
        try OutputSafety.refuseOutputsOntoInputs([("--checkpoint", checkpoint)], inputs: inputs)
        try OutputSafety.refuseSharedOutputs([("-o", output), ("--state-out", stateOut), ("--checkpoint", checkpoint)])
        if let checkpoint { try OutputSafety.refuseNonRegularCheckpoint(checkpoint) }
        // A checkpoint that cannot be resumed is refused before anything is written.
        let state = try resume.map(CheckpointFile.read)
        if checkpoint != nil { StopSignals.install() }
        let destination = try output.map(OutputFile.opening) ?? .standardOutput
        defer { destination.close() }
        let summary = try execute(
            write: destination.write, report: { OutputFile.report($0) }, resuming: state,
            endsProcess: true)
        if summary.strictFailure != nil { throw ExitStatus.badInput }
    }

    /// Runs the command with its output and diagnostics sent to the given closures; the scenario
    /// runner calls this with in-memory sinks. When the process ends right after (`endsProcess`),
    /// the engine is not torn down: freeing a large catalog object by object took longer than
    /// loading it, and the system reclaims the memory at exit anyway.
    func execute(
        write: ([UInt8]) -> Void, report: (String) -> Void, resuming state: [UInt8]? = nil, endsProcess: Bool = false
    ) throws -> RunPipeline.Summary {
        let decoder = CatalogDecoder()
        var catalog = Catalog()
        if let triggers = input.triggers {
            let bytes = try readCatalogBytes(path: triggers, limit: input.catalogLimit)
            let decoded = try decodeCatalog(bytes, path: triggers, decoder: decoder)
            if !quiet {
                for line in catalogWarnings(decoded.warnings, in: bytes, path: triggers) { report(line) }
            }
            catalog = decoded.catalog
        }
        let resumed = try state ?? resume.map(CheckpointFile.read)
        if threads > 1 && (checkpoint != nil || resume != nil) && !quiet {
            report("fenceline: note: --checkpoint and --resume run on one engine (a checkpoint is one engine's state)")
        }
        var options = input.pipelineOptions
        options.strict = strict
        options.maximumReported = maxErrors
        options.clock = clock
        options.deliveredLimit = deliveredLimit
        options.threads = threads
        options.device = device
        let pipeline = RunPipeline(
            catalog: catalog, catalogDecoder: decoder, options: options, encoder: format.makeEncoder(),
            logger: Logger(label: "fenceline"))
        pipeline.resumeState = resumed
        pipeline.checkpointing = checkpoint != nil
        if endsProcess {
            // A signal (under --checkpoint) or output that cannot be written stops the run.
            let stopsOnSignal = checkpoint != nil
            pipeline.shouldStop = {
                OutputFile.failed.load(ordering: .relaxed) || (stopsOnSignal && StopSignals.wasReceived)
            }
        }
        let summary: RunPipeline.Summary
        let inputs = input.inputs
        let display =
            ProgressDisplay.isWanted(forced: progress, quiet: quiet, inputs: input.readings) && endsProcess
            ? ProgressDisplay() : nil
        defer { display?.finish() }
        // A diagnostic replaces the progress line rather than running into it.
        let reportLine = { (line: String) in
            display?.finish()
            report(line)
        }
        do {
            summary = try pipeline.run(inputs: inputs, write: write, report: reportLine, progress: display?.update)
            display?.finish()
            if timings {
                report(Self.timingsLine(from: pipeline.steadyStart, to: .now(readings: summary.readings)))
                if let work = pipeline.lastEngine?.proximityWork, work.fixes > 0 {
                    report(
                        "fenceline: timings: proximity: \(work.fixes) fixes looked at \(work.devicesLookedAt) devices "
                            + "in the grid and evaluated \(work.pairsEvaluated) pairs")
                }
            }
        } catch let error as InputError {
            throw CommandFailure(error)
        } catch let error as CatalogError {
            throw CommandFailure(
                status: ExitStatus.badInput,
                message: error.issues.map { "\(input.triggers ?? "catalog"): \($0)" }.joined(separator: "\n"))
        } catch let error as CheckpointError {
            throw CommandFailure(status: ExitStatus.badInput, message: "\(resume ?? "checkpoint"): \(error)")
        }
        // A checkpoint after events that were not written would lose them on resume.
        if let checkpoint, let bytes = pipeline.lastCheckpoint, !OutputFile.failed.load(ordering: .relaxed) {
            try CheckpointFile.write(bytes, to: checkpoint)
        }
        if let stateOut, let engine = pipeline.lastEngine {
            let file = try OutputFile.opening(stateOut)
            file.write(StateEncoder.encode(engine))
            file.close()
        }
        if !quiet { report(summary.line) }
        if endsProcess { _ = Unmanaged.passRetained(pipeline) }
        return summary
    }

    /// The `--timings` line: the readings after the steady start, and the wall and CPU seconds
    /// they took. Its shape is what Tools/bench reads.
    static func timingsLine(from start: RunMark?, to end: RunMark) -> String {
        let start = start ?? end
        return String(
            format: "fenceline: timings: %d readings after the first in %.6f s wall, %.6f s CPU",
            end.readings - start.readings, end.wall - start.wall, end.cpu - start.cpu)
    }
}
