import ArgumentParser
import Fenceline
import FencelineFormats
import FencelineRun

/// `fenceline readings`: any input format as the normalised NDJSON of SPEC §3.1.
struct Readings: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the readings of any input format as normalised NDJSON.",
        discussion: """
            Reads each file in order (- or none is standard input) in its format — NDJSON, CSV, GPX \
            or NMEA 0183, gzip-compressed or not — and writes one line per fix or beacon sighting \
            in the form `fenceline run` reads (SPEC §3.1): device, time in UTC, lat, lon, then \
            accuracy, speed, heading and altitude when known. This is the conversion tool, and the \
            way to see exactly what Fenceline makes of a file.

            The format comes from the extension (.ndjson .jsonl .json, .csv, .gpx, .nmea .nme; a \
            trailing .gz is looked through), else from the first character: { NDJSON, < GPX, $ or \
            ! NMEA (# comment lines are skipped), anything else CSV. --input-format overrides both.

            GPX points take their device from the track's or route's <name>, else the file name; \
            NMEA fixes from the file name. --device names the device of every GPX and NMEA reading. \
            GPX points come out in time order; NMEA sentences of one receiver epoch (RMC, GGA, GLL \
            with the same time) make one fix.

            Bad lines (a GPX point without <time>, an NMEA sentence with a bad checksum, …) are \
            reported on stderr as file:line: reason and skipped; --strict stops at the first with \
            exit code 65. Control records of an NDJSON stream are not readings: they are counted \
            in the summary, not written.

            Examples:
              fenceline readings Data/gpx/around-visnjan-with-car.gpx
              fenceline readings --device boat Data/nmea/humminbird-M37.log > boat.ndjson
              fenceline readings --input-format nmea - < /dev/ttyUSB0
              fenceline readings trace.csv.gz | fenceline run --triggers fences.json -
            """
    )

    @Argument(help: ArgumentHelp("Input files, read in order; - or none reads standard input.", valueName: "file"))
    var files: [String] = []

    @Option(
        help: ArgumentHelp("Read every input as this format: ndjson, csv, gpx or nmea.", valueName: "format"))
    var inputFormat: InputFormat?

    @Option(help: ArgumentHelp("The device id of every GPX and NMEA reading.", valueName: "id"))
    var device: String?

    @Flag(help: "Stop at the first bad line with exit code 65 instead of skipping it.")
    var strict = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Report at most this many bad lines one by one, then only count them.", valueName: "n"))
    var maxErrors = 20

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "Write the readings to this file instead of standard output (`-`: standard output).", valueName: "file"))
    var output: String?

    @Flag(help: "Print no summary line.")
    var quiet = false

    func validate() throws {
        guard maxErrors >= 0 else { throw ValidationError("--max-errors must be ≥ 0") }
        if let device, device.isEmpty { throw ValidationError("--device must not be empty") }
    }

    func run() async throws {
        try OutputSafety.refuseOutputsOntoInputs([("-o", output)], inputs: files.isEmpty ? ["-"] : files)
        let destination = try output.map(OutputFile.opening) ?? .standardOutput
        defer { destination.close() }
        let report = { (line: String) in OutputFile.report(line) }
        var buffer: [UInt8] = []
        var readings = 0
        var controls = 0
        var badLines = BadLineCounter(maximumReported: maxErrors, strict: strict)
        defer { destination.write(buffer) }
        // `add` records are decoded (and so validated) against an empty catalog.
        try forEachReading(
            in: files, format: inputFormat, device: device,
            requests: NDJSONReadingDecoder.RequestContext(decoder: CatalogDecoder(), catalog: Catalog()),
            badLines: &badLines, report: report
        ) { reading in
            if ReadingEncoder.encode(reading, into: &buffer) { readings += 1 } else { controls += 1 }
            if buffer.count >= 1 << 16 {
                destination.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !quiet {
            let extra = controls > 0 ? ", \(counted(controls, "control record")) not written" : ""
            report("fenceline: \(counted(readings, "reading")), \(badLines.count) skipped\(extra)")
        }
        if badLines.strictFailure != nil { throw ExitStatus.badInput }
    }
}

/// Reads `paths` in order (- or none is standard input) as readings of any format, passing each to
/// `body` and each bad line to `badLines`; stops at a strict failure. Every input is opened first,
/// so that a missing one fails before anything is read.
/// - Throws: ``CommandFailure`` when an input cannot be opened or read.
func forEachReading(
    in paths: [String], format: InputFormat?, device: String?, requests: NDJSONReadingDecoder.RequestContext,
    badLines: inout BadLineCounter, report: (String) -> Void, _ body: (Reading) -> Void
) throws {
    do {
        let sources = try (paths.isEmpty ? ["-"] : paths).map { path throws(InputError) in
            try ReadingSource(path: path, format: format, device: device, requests: requests)
        }
        for source in sources where badLines.strictFailure == nil {
            try source.forEach { item in
                switch item {
                case .success(let reading):
                    body(reading)
                    return true
                case .failure(let error):
                    return badLines.reject(error, report: report)
                }
            }
        }
        if let line = badLines.unreportedLine { report(line) }
    } catch let error as InputError {
        throw CommandFailure(error)
    }
}
