public import ArgumentParser
import Fenceline
import FencelineFormats
import FencelineRun

extension EventFormat: ExpressibleByArgument {}
extension InputFormat: ExpressibleByArgument {}
extension ClockMode: ExpressibleByArgument {}

/// A time on the command line: RFC 3339 or Unix seconds.
struct TimeArgument: ExpressibleByArgument {
    var timestamp: Timestamp

    init?(argument: String) {
        if let time = Timestamp(rfc3339: argument) {
            timestamp = time
        } else if let seconds = Double(argument), let time = Timestamp(checkedSeconds: seconds) {
            timestamp = time
        } else {
            return nil
        }
    }

    static var defaultValueDescription: String { "RFC 3339 time or Unix seconds" }
}

/// The options `run`, `explain` and `render` share: the catalog, the reading files and how they
/// are read and timed.
struct InputOptions: ParsableArguments {
    @Option(
        name: .long, help: ArgumentHelp("The trigger catalog: JSON, or a GeoJSON FeatureCollection.", valueName: "file")
    )
    var triggers: String?

    @OptionGroup var catalogLimit: CatalogLimit

    /// The catalog's path, which every command but a resumed `run` needs.
    var catalogPath: String {
        get throws {
            guard let triggers else { throw ValidationError("Missing expected argument '--triggers <file>'") }
            return triggers
        }
    }

    @Argument(
        help: ArgumentHelp("Reading files, read in order; - or none reads standard input.", valueName: "readings"))
    var readings: [String] = []

    @Option(help: ArgumentHelp("Read every input as this format: ndjson, csv, gpx or nmea.", valueName: "format"))
    var inputFormat: InputFormat?

    @Option(
        help: ArgumentHelp(
            "At end of input, move the clock to this time (RFC 3339 or Unix seconds) and fire the timers due by then.",
            valueName: "time"))
    var until: TimeArgument?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Hold readings this many seconds and apply them in time order.", valueName: "seconds"))
    var reorderWindow: Double = 0

    @OptionGroup var timeToLive: DeviceTimeToLive

    /// The files to read, `-` (standard input) when none is named.
    var inputs: [String] { readings.isEmpty ? ["-"] : readings }

    /// The run pipeline's options these set (the rest keep their defaults).
    var pipelineOptions: RunPipeline.Options {
        var options = RunPipeline.Options()
        options.inputFormat = inputFormat
        options.until = until?.timestamp
        options.reorderWindow = TimeSpan(seconds: reorderWindow)
        options.deviceTTL = timeToLive.span
        return options
    }

    func validate() throws {
        guard reorderWindow >= 0, reorderWindow <= 1e9 else {
            throw ValidationError("--reorder-window must be a number of seconds ≥ 0")
        }
    }
}

/// `--device-ttl` of `run` (and the commands that read as it does) and `serve` (SPEC §12).
struct DeviceTimeToLive: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Forget a device silent this many seconds after its last reading: each fence it is inside exits "
                + "with reason expired.",
            valueName: "seconds"))
    var deviceTTL: Double?

    var span: TimeSpan? { deviceTTL.map { TimeSpan(seconds: $0) } }

    func validate() throws {
        if let deviceTTL, !(deviceTTL > 0 && deviceTTL <= 1e9) {
            throw ValidationError("--device-ttl must be a number of seconds > 0")
        }
    }
}
