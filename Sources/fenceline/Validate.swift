import ArgumentParser
import Fenceline
import FencelineFormats

/// `fenceline validate`: check a catalog and report every problem at once.
struct Validate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a trigger catalog and report every problem at once.",
        discussion: """
            Prints one line per problem, naming the line of the file, the request id and the JSON \
            path (file:line: request "id": path: message), and exits 65 if there is any; otherwise \
            prints what the catalog holds and exits 0. Polygons are checked \
            with GEOS (closed rings of at least 4 positions, no self-intersection).

            Examples:
              fenceline validate Data/scenarios/real-drive-visnjan/triggers.json
              fenceline validate fences.geojson
            """
    )

    @OptionGroup var catalogLimit: CatalogLimit

    @Argument(help: ArgumentHelp("The catalog to check.", valueName: "file"))
    var file: String

    func run() async throws {
        let bytes = try readCatalogBytes(path: file, limit: catalogLimit)
        let decoded = try decodeCatalog(bytes, path: file, decoder: CatalogDecoder())
        for line in catalogWarnings(decoded.warnings, in: bytes, path: file) { OutputFile.report(line) }
        let requests = decoded.catalog.requests
        var counts: [TriggerKind: Int] = [:]
        for request in requests { counts[request.trigger.kind, default: 0] += 1 }
        let kinds = TriggerKind.allCases.compactMap { kind in counts[kind].map { "\($0) \(kind.rawValue)" } }
        let categories = decoded.catalog.categories.count
        var line = "\(file): ok: \(counted(requests.count, "request"))"
        if !kinds.isEmpty { line += " (\(kinds.joined(separator: ", ")))" }
        if categories > 0 { line += ", \(counted(categories, "category", plural: "categories"))" }
        OutputFile.standardOutput.write(line.terminalSafe + "\n")
    }
}
