import ArgumentParser
import Fenceline
import FencelineFormats
import FencelineRun
import FencelineService
import Foundation
import Logging

/// `fenceline serve`: the engine as a durable HTTP service (SPEC §11).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the engine as a durable HTTP service with its state in a SQLite store.",
        discussion: """
            Readings are POSTed as NDJSON to /v1/readings; a 200 answer means the batch and every \
            event it produced are on disk. The event log is read from /v1/events, and \
            /v1/export gives every line the service applied, in order: `fenceline run` over it \
            with the store's first catalog gives exactly the event log. After a crash or a \
            restart on the same --data the service goes on from its last checkpoint and journal.

            Every path but /healthz, /readyz and the live map at / (which asks for the token \
            itself) needs Authorization: Bearer <token>: the token in --token-file, else \
            FENCELINE_TOKEN, else one made for the store and printed once.

            Requests, categories and delivered notifications are managed live (/v1/requests, \
            /v1/categories, /v1/delivered), each change journaled like a line of readings. \
            Checkpoints come every --checkpoint-every lines and every --checkpoint-interval \
            seconds; with --retention, what is older than the period is dropped at a checkpoint, \
            and GET /v1/export/checkpoint gives the state the export then starts from.

            SIGTERM or SIGINT: stop accepting, finish the batches in flight, checkpoint, drain \
            the webhooks for up to 10 s, exit 0.

            Examples:
              fenceline serve --data /var/lib/fenceline --triggers fences.json
              fenceline serve --data ./store --listen 127.0.0.1:0 --token-file token.txt
            """)

    @Option(help: ArgumentHelp("The store's directory (created when missing).", valueName: "dir"))
    var data: String

    @Option(help: ArgumentHelp("The catalog a new store starts from.", valueName: "file"))
    var triggers: String?

    @Option(help: ArgumentHelp("Address and port to listen on (port 0: any free one).", valueName: "host:port"))
    var listen = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("A file holding the bearer token.", valueName: "file"))
    var tokenFile: String?

    @Option(
        help: ArgumentHelp(
            "event: only readings move the clock; wall: the wall clock too, each second.", valueName: "event|wall"))
    var clock = ClockMode.event

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Hold readings this many seconds and apply them in time order.", valueName: "seconds"))
    var reorderWindow: Double = 0

    @Option(parsing: .unconditional, help: ArgumentHelp("Delivered notifications kept per device.", valueName: "n"))
    var deliveredLimit = 64

    @OptionGroup var timeToLive: DeviceTimeToLive

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Checkpoint the engine after this many journal lines.", valueName: "lines"))
    var checkpointEvery = 50_000

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Checkpoint the engine this many seconds after the last, when anything was applied since.",
            valueName: "seconds"))
    var checkpointInterval = 300.0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Keep the journal, the event log and the export this many seconds (default: for ever); "
                + "older ones are dropped at checkpoints, and GET /v1/export/checkpoint gives the state the "
                + "export then starts from.",
            valueName: "seconds"))
    var retention: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Close a connection that sends nothing for this many seconds (mid-body or between requests).",
            valueName: "seconds"))
    var idleTimeout = 30.0

    @OptionGroup var catalogLimit: CatalogLimit

    func validate() throws {
        guard address != nil else { throw ValidationError("--listen must be host:port, as 127.0.0.1:8080") }
        guard reorderWindow >= 0, reorderWindow <= 1e9 else {
            throw ValidationError("--reorder-window must be a number of seconds ≥ 0")
        }
        guard deliveredLimit >= 1 else { throw ValidationError("--delivered-limit must be ≥ 1") }
        guard checkpointEvery >= 1 else { throw ValidationError("--checkpoint-every must be ≥ 1") }
        guard checkpointInterval >= 1, checkpointInterval <= 86_400 else {
            throw ValidationError("--checkpoint-interval must be a number of seconds from 1 to 86400")
        }
        if let retention, !(retention >= 1 && retention <= 100 * 365 * 86_400) {
            throw ValidationError("--retention must be a number of seconds from 1 to 100 years")
        }
        guard idleTimeout >= 0.1, idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout must be a number of seconds from 0.1 to 86400")
        }
    }

    /// `--listen` as host and port.
    var address: (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        let host = String(listen[..<colon])
        return host.isEmpty ? nil : (host, port)
    }

    func run() async throws {
        var options = FencelineServer.Options(dataDirectory: data, catalogBytes: Array(#"{"requests":[]}"#.utf8))
        if let triggers {
            // Read here (inflated, within the limit); decoded by the service only when its store
            // has not applied these bytes before, with the errors located in the file.
            options.catalogBytes = try readCatalogBytes(path: triggers, limit: catalogLimit)
            options.decodeCatalog = { bytes in
                try decodeCatalog(bytes, path: triggers, decoder: CatalogDecoder()).catalog
            }
        }
        options.host = address!.host
        options.port = address!.port
        options.configuration = Engine.Configuration(
            reorderWindow: TimeSpan(seconds: reorderWindow), deliveredLimit: deliveredLimit,
            deviceTTL: timeToLive.span)
        options.checkpointEvery = checkpointEvery
        options.checkpointInterval = checkpointInterval
        options.retention = retention
        options.wallClock = clock == .wall
        options.idleTimeout = idleTimeout
        if let tokenFile {
            options.token = try Self.token(in: tokenFile)
        } else if let token = ProcessInfo.processInfo.environment["FENCELINE_TOKEN"], !token.isEmpty {
            options.token = token
        }
        try await FencelineServer.run(options, logger: Logger(label: "fenceline.serve")) { line in
            OutputFile.report(line)
        }
    }

    /// The token in the file at `path`, without the whitespace around it. The file is read as any
    /// input is, so a missing or unreadable one exits 66 naming it, and a damaged one 65.
    static func token(in path: String) throws -> String {
        let bytes: [UInt8]
        let reader: LineReader
        do throws(InputError) {
            reader = try LineReader(path: path)
            bytes = try reader.readAll(limit: 64 << 10)
        } catch {
            throw CommandFailure(error)
        }
        if let failure = reader.failure { throw CommandFailure(failure) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandFailure(status: ExitStatus.badInput, message: "\(path): the token is not UTF-8 text")
        }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else {
            throw CommandFailure(status: ExitStatus.badInput, message: "\(path): holds no token")
        }
        return token
    }
}
