import ArgumentParser
import FencelineFormats
import Foundation

/// `fenceline test`: run recorded scenarios and compare their events with the expected ones.
struct ScenarioTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run scenario folders and compare their events with expected.ndjson.",
        discussion: """
            A scenario folder holds triggers.json, one or more readings.* files (read in name \
            order), an optional args.json (a JSON array of extra `run` arguments, such as \
            ["--until", "2026-03-02T09:00:00Z"]) and expected.ndjson. A folder without \
            triggers.json is searched one level down for scenario folders.

            Prints ok or FAIL per scenario with a diff of the events, and exits 1 if any differs. \
            --update rewrites expected.ndjson from the current output instead.

            Examples:
              fenceline test Data/scenarios
              fenceline test Data/scenarios/jitter-at-edge --update
              fenceline test Data/scenarios --threads 4
            """
    )

    @Argument(help: ArgumentHelp("Scenario folders, or folders of them.", valueName: "dir"))
    var directories: [String]

    @Flag(help: "Rewrite expected.ndjson with the current output.")
    var update = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Run each scenario with `run --threads <n>`: sharded runs must give the same events.",
            valueName: "n"))
    var threads: Int?

    func validate() throws {
        if let threads, !(1...64).contains(threads) { throw ValidationError("--threads must be in 1…64") }
        if threads != nil && update { throw ValidationError("--update records with one thread; drop --threads") }
    }

    func run() async throws {
        let scenarios = try directories.flatMap(Self.scenarios(in:))
        guard !scenarios.isEmpty else {
            throw CommandFailure(
                status: ExitStatus.fileMissing,
                message: "no scenario folders (with triggers.json) in \(directories.joined(separator: " "))")
        }
        var failed = 0
        for scenario in scenarios {
            let outcome = try Self.run(scenario: scenario, threads: threads)
            let expectedPath = "\(scenario)/expected.ndjson"
            if update {
                try Data(outcome.output).write(to: URL(fileURLWithPath: expectedPath))
                OutputFile.standardOutput.write("updated \(scenario)\n")
                continue
            }
            guard let expected = FileManager.default.contents(atPath: expectedPath) else {
                failed += 1
                OutputFile.standardOutput.write("FAIL \(scenario): no expected.ndjson (record it with --update)\n")
                continue
            }
            let diff = LineDiff.unified(
                expected: String(decoding: expected, as: UTF8.self),
                actual: String(decoding: outcome.output, as: UTF8.self))
            if diff.isEmpty {
                OutputFile.standardOutput.write("ok   \(scenario)\n")
            } else {
                failed += 1
                OutputFile.standardOutput.write("FAIL \(scenario)\n\(diff)")
                for line in outcome.diagnostics {
                    OutputFile.standardOutput.write("     stderr: \(line.terminalSafe)\n")
                }
            }
        }
        if !update {
            OutputFile.standardOutput.write(
                "\(counted(scenarios.count, "scenario")), \(failed) failed\n")
        }
        if failed > 0 { throw ExitStatus.differences }
    }

    /// The scenario folders at or directly under `directory`, in name order.
    static func scenarios(in directory: String) throws -> [String] {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure(status: ExitStatus.fileMissing, message: "\(directory): no such folder")
        }
        if manager.fileExists(atPath: "\(directory)/triggers.json") { return [directory] }
        let children = try manager.contentsOfDirectory(atPath: directory).sorted()
        return children.map { "\(directory)/\($0)" }.filter { manager.fileExists(atPath: "\($0)/triggers.json") }
    }

    /// Runs one scenario in this process and returns its output and diagnostics.
    static func run(scenario: String, threads: Int? = nil) throws -> (output: [UInt8], diagnostics: [String]) {
        let manager = FileManager.default
        let readings = try manager.contentsOfDirectory(atPath: scenario).filter { $0.hasPrefix("readings.") }.sorted()
        var arguments = ["--triggers", "\(scenario)/triggers.json", "--quiet"] + readings.map { "\(scenario)/\($0)" }
        if let data = manager.contents(atPath: "\(scenario)/args.json") {
            guard let extra = try? JSONSerialization.jsonObject(with: data) as? [String] else {
                throw CommandFailure(
                    status: ExitStatus.badInput, message: "\(scenario)/args.json: expected a JSON array of strings")
            }
            arguments += extra
        }
        if let threads { arguments += ["--threads", String(threads)] }
        let command: Run
        do {
            command = try Run.parse(arguments)
        } catch {
            throw CommandFailure(status: ExitStatus.usage, message: "\(scenario)/args.json: \(Run.message(for: error))")
        }
        var output: [UInt8] = []
        var diagnostics: [String] = []
        _ = try command.execute(write: { output.append(contentsOf: $0) }, report: { diagnostics.append($0) })
        return (output, diagnostics)
    }
}
