import Foundation

/// The proximity figure: `fenceline run` end to end on devices reporting at 1 Hz in the city area
/// with one proximity request over all of them, so every fix looks up its neighbours among the
/// other devices' last positions rather than among fences.
extension BenchCommand {
    /// The proximity workload's catalog and canonical readings.
    struct ProximityFiles {
        var catalog: String
        var readings: String
    }

    /// Writes the proximity workload under `directory` when missing: its own seed, so the walks
    /// differ from city10k's, in the same area and layout.
    func generateProximity() throws -> ProximityFiles {
        let base = "\(directory)/proximity-\(proximityDevices)x\(proximitySteps)"
        let files = ProximityFiles(catalog: "\(directory)/proximity.json", readings: base + ".ndjson")
        let manager = FileManager.default
        if !manager.fileExists(atPath: files.catalog) {
            print("generating \(files.catalog)")
            try Workload.writeProximityCatalog(to: files.catalog)
        }
        if !manager.fileExists(atPath: files.readings) {
            print("generating \(files.readings)")
            var workload = Workload(seed: 5, area: .city)
            try workload.writeReadings(devices: proximityDevices, steps: proximitySteps, base: base)
        }
        return files
    }

    /// Times `fenceline run` on the proximity workload as the canonical rows of country100k and
    /// city10k are timed (the streaming phase its `--timings` reports, fastest of `repeats`), and
    /// counts the events it writes.
    func addProximityFigures(
        to table: inout Table, files: ProximityFiles, failures: inout [String],
        target: (String, String, Bool) -> String
    ) throws {
        let name = "proximity\(proximityDevices / 1000)k"
        let figure = "\(name): end to end, canonical NDJSON, one proximity request (readings/s)"
        let output = "\(directory)/\(name).events.ndjson"
        let arguments = ["run", "--triggers", files.catalog, files.readings, "-o", output, "--quiet"]
        let stream = try Spawned.streaming(of: repeats, fenceline, [arguments])[0]
        guard stream.whole.status == 0 else {
            // A build whose engine does not know the trigger rejects the catalog (exit 65): the row
            // says so and the other figures of a full run are still measured. Its stderr is kept.
            let log = "\(directory)/\(name).stderr"
            _ = try Spawned.run(fenceline, arguments, standardError: log)
            let code = (stream.whole.status >> 8) & 0xff
            failures.append("\(name): fenceline run exited with \(code) (its stderr: \(log))")
            table.add(figure, "run failed (exit \(code))", "", "", target("≥ 1 M", "\(name) end to end", false))
            return
        }
        let streaming = Double(stream.readings) / stream.seconds
        table.add(figure, rate(streaming), "", "", target("≥ 1 M", "\(name) end to end", streaming >= 1e6))
        table.add("\(name): events written", String(try lineCount(output)), "", "", "")
        // The grid's work, from one more run's --timings: what a fix looks at, against the
        // devices every fix would check if pairs were found by checking every pair.
        let log = "\(directory)/\(name).timings"
        _ = try Spawned.run(fenceline, arguments + ["--timings"], standardError: log)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        let numbers = text.firstMatch(
            of: /proximity: (\d+) fixes looked at (\d+) devices in the grid and evaluated (\d+) pairs/)
        guard let numbers, let fixes = Double(numbers.1), fixes > 0, let looked = Double(numbers.2),
            let evaluated = Double(numbers.3)
        else {
            failures.append("\(name): no proximity line in --timings (\(log))")
            return
        }
        let perFix = looked / fixes
        table.add(
            "\(name): devices looked at per fix (of \(proximityDevices)); pairs evaluated per fix",
            String(format: "%.1f; %.2f", perFix, evaluated / fixes), "", "",
            target("≪ \(proximityDevices)", "\(name) pairs never scanned", perFix < Double(proximityDevices) / 100))
    }
}

extension Workload {
    /// One proximity request over every device of ``writeReadings(devices:steps:base:layouts:)``
    /// (all named `dev-…`), with SPEC §12's figures: near 50 m, far 75 m, fixes at most 60 s apart.
    static func writeProximityCatalog(to path: String) throws {
        let text = """
            {"requests":[{"id":"meet","content":{"title":"{device} near {other}"},\
            "trigger":{"type":"proximity","near":50,"far":75,"among":["dev-*"],"maxAge":60}}]}

            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }
}
