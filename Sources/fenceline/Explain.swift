import ArgumentParser
import Fenceline
import FencelineFormats
import FencelineRender
import FencelineRun
import Logging

/// `fenceline explain`: why an event of one device and request did or did not fire.
struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Explain why an event did or did not fire, fix by fix, for one device and request.",
        discussion: """
            Runs the catalog over the readings exactly as `fenceline run` does (same clock, same \
            timers, every device), and prints for one device and one region request: the \
            request's rules, then a timeline of the device's fixes — signed distance s to the \
            boundary (negative inside), accuracy, the condition the fix meets (enter, exit, or band \
            between the thresholds), the standing before → after — with the hysteresis timers \
            (delays, dwell) as they fall due and the events notified, numbered as in run's output. \
            It ends with a diagnosis: where the device stands and, when it never left (or \
            entered), why: no fix met the condition, the streaks were cut, a streak was still \
            waiting at the end, or fixes were ignored for their accuracy or a position filter.

            For a beacon request: each sighting of its beacons by the device, with the smoothed \
            RSSI, distance, proximity class and whether it counts, and each enter delay, exit \
            timeout and exit delay. For a proximity request: each evaluation of a pair the device \
            is in, at a fix of either device (the other device, their distance, how far apart the \
            fixes' times are, near, band, far or too old), each delay and age-out, and the pairs \
            it is in at the end. For a time or calendar request: each due time, fired (with its \
            notifications) or muted by the schedule, and when it is due next.

            Readings and formats are those of `fenceline run`, and so are its input options \
            (--triggers, --input-format, --until, --reorder-window, --device-ttl); --input-device names the \
            device of GPX and NMEA inputs (run's --device).

            Examples:
              fenceline explain --triggers Data/scenarios/jitter-at-edge/triggers.json \\
                  --device walker --request edge-default \\
                  Data/scenarios/jitter-at-edge/readings.ndjson
              fenceline explain --triggers fences.json --device truck-17 --request depot \\
                  --until 2026-03-02T18:00:00Z day.ndjson
              fenceline explain --triggers fences.json --device car --request home \\
                  --input-device car drive.gpx
            """
    )

    @Option(help: ArgumentHelp("The device to explain.", valueName: "id"))
    var device: String

    @Option(help: ArgumentHelp("The request to explain.", valueName: "id"))
    var request: String

    @OptionGroup var input: InputOptions

    @Option(help: ArgumentHelp("The device id of GPX and NMEA readings (run's --device).", valueName: "id"))
    var inputDevice: String?

    @Flag(help: "List every fix; by default runs of fixes that change nothing are shown as one row and a count.")
    var everyFix = false

    func validate() throws {
        _ = try input.catalogPath
    }

    func run() async throws {
        let decoder = CatalogDecoder()
        let decoded = try loadCatalog(path: try input.catalogPath, decoder: decoder, limit: input.catalogLimit)
        guard let target = decoded.catalog.requests.last(where: { $0.id == request }) else {
            let ids = decoded.catalog.requests.prefix(20).map(\.id).joined(separator: ", ")
            throw CommandFailure(
                status: ExitStatus.usage,
                message: "\(try input.catalogPath): no request \"\(request)\"; the catalog has: \(ids)")
        }
        var options = input.pipelineOptions
        options.device = inputDevice
        options.maximumReported = 5
        let collector = PairEvents(device: device, request: request)
        let pipeline = RunPipeline(
            catalog: decoded.catalog, catalogDecoder: decoder, options: options, encoder: collector,
            logger: Logger(label: "fenceline"))
        let tracer = RegionTracer(device: device, request: request)
        pipeline.tracer = tracer
        pipeline.maximumEvents = RunPipeline.inMemoryEventLimit
        do {
            let summary = try pipeline.run(
                inputs: input.inputs, write: { _ in },
                report: { OutputFile.report($0) })
            if summary.reachedEventLimit { throw CommandFailure.eventLimit(command: "explain") }
        } catch let error as InputError {
            throw CommandFailure(error)
        }
        var text = ExplainReport.render(request: target, tracer: tracer, written: collector.written, everyFix: everyFix)
        if case .region = target.trigger, tracer.steps.isEmpty && !collector.devices.isEmpty {
            let seen = collector.devices.sorted().prefix(10).joined(separator: ", ")
            text +=
                "Devices with events: \(seen). GPX and NMEA inputs take their device from the track name or file name (--input-device sets it).\n"
        }
        OutputFile.standardOutput.write(Array(text.utf8))
    }
}

/// Collects one pair's events as written, and which devices had events at all.
private final class PairEvents: EventEncoder {
    let device: String
    let request: String
    var written: [Event] = []
    var devices: Set<String> = []

    init(device: String, request: String) {
        self.device = device
        self.request = request
    }

    func encode(_ event: Event, into bytes: inout [UInt8]) {
        if let device = event.device { devices.insert(device) }
        // A time or calendar request's notifications are its own whatever device they are for.
        let timed = event.trigger == .timeInterval || event.trigger == .calendar
        if event.requestID == request && (event.device == device || timed) { written.append(event) }
    }
}
