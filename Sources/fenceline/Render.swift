import ArgumentParser
import Fenceline
import FencelineFormats
import FencelineRender
import FencelineRun
import Logging

/// `fenceline render`: a picture of the fences, the device tracks and the events.
struct Render: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw the fences, the device tracks and the events as SVG or a self-contained HTML page.",
        discussion: """
            Runs the catalog over the readings as `fenceline run` does and draws the result: \
            the region fences (circles, polygons with holes, corridors) with their ids, one \
            coloured track per device in time order, and each event as a marked point (enter, \
            exit, dwell, cross, state) with a tooltip, plus a legend, a scale bar and a title \
            with the time span. With --html (or an -o name ending in .html) the SVG is embedded \
            in a standalone page with the legend and a table of the events; it needs no network.

            Readings and formats are those of `fenceline run`, and so are its input options \
            (--triggers, --input-format, --device, --until, --reorder-window). Bad lines are \
            reported on stderr and skipped.

            Examples:
              fenceline render --triggers Data/scenarios/real-drive-visnjan/triggers.json \\
                  Data/scenarios/real-drive-visnjan/readings.ndjson -o drive.svg
              fenceline render --triggers fences.json --html -o fleet.html day.ndjson.gz
              fenceline render --triggers fences.json --title "Ride, 2 March" ride.gpx \\
                  > ride.svg
            """
    )

    @OptionGroup var input: InputOptions

    @Option(help: ArgumentHelp("The device id of GPX and NMEA readings.", valueName: "id"))
    var device: String?

    @Flag(help: "Write a self-contained HTML page instead of an SVG.")
    var html = false

    @Option(parsing: .unconditional, help: ArgumentHelp("The picture's width in pixels.", valueName: "px"))
    var width: Int?

    @Option(
        help: ArgumentHelp(
            "A title for the picture (default: the readings' and catalog's file names).", valueName: "text"))
    var title: String?

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("Write to this file instead of standard output (`-`: standard output).", valueName: "file"))
    var output: String?

    @Flag(help: "Print no summary line.")
    var quiet = false

    func validate() throws {
        _ = try input.catalogPath
        if let width, !(480...20000).contains(width) { throw ValidationError("--width must be in 480…20000") }
    }

    func run() async throws {
        try OutputSafety.refuseOutputsOntoInputs(
            [("-o", output)], inputs: input.inputs + [input.triggers].compactMap { $0 })
        let decoder = CatalogDecoder()
        let catalog = try loadCatalog(path: try input.catalogPath, decoder: decoder, limit: input.catalogLimit).catalog
        var runOptions = input.pipelineOptions
        runOptions.device = device
        let collector = EventCollector()
        let pipeline = RunPipeline(
            catalog: catalog, catalogDecoder: decoder, options: runOptions, encoder: collector,
            logger: Logger(label: "fenceline"))
        var fixes: [Fix] = []
        pipeline.observer = { reading in
            if case .fix(let fix) = reading { fixes.append(fix) }
        }
        pipeline.maximumEvents = RunPipeline.inMemoryEventLimit
        let summary: RunPipeline.Summary
        do {
            summary = try pipeline.run(
                inputs: input.inputs, write: { _ in }, report: { OutputFile.report($0) })
        } catch let error as InputError {
            throw CommandFailure(error)
        }
        if summary.reachedEventLimit { throw CommandFailure.eventLimit(command: "render") }
        let events = collector.events
        var options = TraceRenderer.Options()
        if let width { options.width = Double(width) }
        let names =
            input.readings.isEmpty
            ? ["standard input"] : input.readings.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
        options.title =
            title
            ?? "\(names.joined(separator: ", ")) · \(input.triggers?.split(separator: "/").last.map(String.init) ?? "")"
        let renderer = TraceRenderer(catalog: catalog, options: options)
        let asHTML = html || output?.lowercased().hasSuffix(".html") == true
        let text = asHTML ? renderer.html(fixes: fixes, events: events) : renderer.svg(fixes: fixes, events: events)
        let destination = try output.map(OutputFile.opening) ?? .standardOutput
        destination.write(Array(text.utf8))
        destination.close()
        if !quiet {
            let devices = Set(fixes.map(\.device)).count
            OutputFile.standardError.write(
                "fenceline: drew \(counted(catalog.requests.count, "request")), \(counted(fixes.count, "fix", plural: "fixes")) "
                    + "of \(counted(devices, "device")), \(counted(events.count, "event")); \(summary.skipped) skipped\n"
            )
        }
    }
}

/// Keeps the events of a run, in order, for the picture.
private final class EventCollector: EventEncoder {
    var events: [Event] = []

    func encode(_ event: Event, into bytes: inout [UInt8]) {
        events.append(event)
    }
}
