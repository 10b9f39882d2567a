public import Fenceline
import FencelineFormats
import Foundation
import Hummingbird
public import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `fenceline serve`: the engine as a durable HTTP service (SPEC §11).
public enum FencelineServer {
    /// What `serve` was given.
    public struct Options: Sendable {
        /// The store's directory (`--data`).
        public var dataDirectory: String
        /// The catalog a new store starts from, as its file's bytes.
        public var catalogBytes: [UInt8]
        /// Decodes `catalogBytes`, throwing errors worded for the caller (the CLI names the file
        /// and line). Called only when needed: on a new store, or when the bytes are not those
        /// the store last applied (a large catalog takes a second or more to decode).
        public var decodeCatalog: @Sendable ([UInt8]) throws -> Catalog = { try CatalogDecoder().decode($0).catalog }
        /// Where to listen (`--listen`); port 0 picks a free one, which is printed.
        public var host = "127.0.0.1"
        public var port = 8080
        /// The bearer token (`--token-file`, `FENCELINE_TOKEN`); `nil` keeps one in the store.
        public var token: String?
        public var configuration = Engine.Configuration()
        /// A checkpoint after this many journal lines.
        public var checkpointEvery = 50_000
        /// A checkpoint this many seconds after the last, when anything was applied since.
        public var checkpointInterval = 300.0
        /// `--retention`: seconds the journal, the event log and the export are kept; `nil`: for ever.
        public var retention: Double?
        /// `--clock wall`: the wall clock also moves the engine's clock, each second.
        public var wallClock = false
        /// Seconds a connection may send nothing (`--idle-timeout`), mid-body or between requests.
        public var idleTimeout = 30.0

        public init(dataDirectory: String, catalogBytes: [UInt8]) {
            self.dataDirectory = dataDirectory
            self.catalogBytes = catalogBytes
        }
    }

    /// Opens the store, listens, recovers the engine, and serves until SIGTERM or SIGINT, after
    /// which the batches in flight finish and the engine is checkpointed. While the engine is
    /// recovered (a large catalog, a long journal) `/healthz` answers 200, `/readyz` 503 and every
    /// other path 503 `starting`, so an orchestrator's liveness probe does not kill a restart
    /// that is replaying its journal. `announce` gets the lines to print (the address once ready,
    /// a token made for a new store).
    public static func run(_ options: Options, logger: Logger, announce: @escaping @Sendable (String) -> Void)
        async throws
    {
        let store = try ServiceStore(directory: options.dataDirectory)
        var settings = ServiceEngine.Settings()
        settings.configuration = options.configuration
        settings.checkpointEvery = options.checkpointEvery
        settings.retention = options.retention
        settings.wallClock = options.wallClock
        let metrics = ServiceMetrics()
        // A token made for a new store is kept and shown only once the store has loaded: a run
        // that fails on its catalog must not keep one nobody saw again.
        let token: String
        let made: String?
        if let given = try options.token ?? store.meta("token").map({ String(decoding: $0, as: UTF8.self) }) {
            (token, made) = (given, nil)
        } else {
            token = Self.makeToken()
            made = token
        }
        let stopping = StopFlag()
        let gate = ServiceGate(host: options.host, announce: announce)
        let app = Application(
            responder: GatedResponder(
                gate: gate, starting: ServiceRoutes.startingRouter(token: token).buildResponder()),
            // A connection that sends nothing for a while (idle between requests, or a body that
            // stalls) is closed, so slow and idle clients cannot pile up; streams being answered stay.
            server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(options.idleTimeout * 1000)))),
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: "fenceline"),
            onServerRunning: { channel in gate.bound(port: channel.localAddress?.port ?? options.port) },
            logger: logger)
        let recovery = Recovery(
            gate: gate,
            load: { [settings] in
                let engine = try ServiceEngine(
                    store: store, catalogBytes: options.catalogBytes, decodeCatalog: options.decodeCatalog,
                    settings: settings, metrics: metrics, logger: logger)
                try await engine.addChangedRequests(
                    catalogBytes: options.catalogBytes, decodeCatalog: options.decodeCatalog)
                if let made {
                    try store.setMeta("token", Array(made.utf8))
                    announce("fenceline: a token was made for this store (kept in it): \(made)")
                }
                let router = ServiceRoutes.router(
                    engine: engine, store: store, metrics: metrics, token: token, stopping: stopping)
                return (engine, router.buildResponder())
            })
        // Services stop in reverse order (SPEC §11, shutdown): the wall clock; the stop flag, so
        // open event streams end and the server's graceful shutdown does not wait for them; the
        // server, finishing the batches in flight; the recovery, if it is still under way; the
        // checkpoint; then the webhooks' drain. Those that need the engine wait for it.
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: WebhookDelivery(store: store, metrics: metrics, logger: logger)),
                    .init(service: CheckpointAtShutdown(gate: gate)),
                    .init(service: recovery),
                    .init(
                        service: Housekeeping(
                            gate: gate, checkpointInterval: options.checkpointInterval,
                            retention: options.retention, logger: logger)),
                    .init(service: app), .init(service: StopWatcher(flag: stopping)),
                ]
                    + (options.wallClock ? [.init(service: WallClock(gate: gate, logger: logger))] : []),
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        if let engine = gate.engine { try await engine.checkpoint() }
    }

    /// A new store's token: 32 random bytes in hex.
    private static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return lowercaseHex((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

/// Set once a graceful shutdown begins; long-lived responses (event streams) watch it.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// A service that only waits for the graceful shutdown and sets the flag.
private struct StopWatcher: Service {
    let flag: StopFlag

    func run() async throws {
        try? await gracefulShutdown()
        flag.set()
    }
}

/// Checkpoints the engine once the server has stopped, before the webhooks drain (after the
/// recovery: the group stops it first, so an engine recovered by then is there).
private struct CheckpointAtShutdown: Service {
    let gate: ServiceGate

    func run() async throws {
        try? await gracefulShutdown()
        guard let engine = gate.engine else { return }
        try await engine.checkpoint()
        await engine.finishWALCopy()
    }
}

/// Recovers the engine from the store (its checkpoint and journal), then opens the gate to the
/// service's routes and waits for the shutdown; a failure ends the group, as it ended `serve`
/// before it listened.
private struct Recovery: Service {
    let gate: ServiceGate
    let load: @Sendable () async throws -> (ServiceEngine, RouterResponder<ServiceContext>)

    func run() async throws {
        let (engine, responder) = try await load()
        // Stopped meanwhile: the server is gone, so no routes and no "serving on"; the engine
        // is kept for the shutdown's checkpoint.
        gate.open(engine: engine, responder: Task.isShuttingDownGracefully ? nil : responder)
        try? await gracefulShutdown()
    }
}

/// Checkpoints every `--checkpoint-interval` seconds when anything was applied, so that a
/// restart replays little of the journal, and with `--retention` drops what is older.
private struct Housekeeping: Service {
    let gate: ServiceGate
    let checkpointInterval: Double
    let retention: Double?
    let logger: Logger

    func run() async throws {
        guard let engine = await gate.waitForEngine() else { return }
        // A prune every sixteenth of the retention period, from once a second to every 10 minutes.
        let pruneInterval = retention.map { min(max($0 / 16, 1), 600) }
        var lastCheckpoint = ContinuousClock.now
        var lastPrune = ContinuousClock.now - .seconds(86_400)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            do {
                if let pruneInterval, ContinuousClock.now - lastPrune >= .seconds(pruneInterval) {
                    lastPrune = .now
                    lastCheckpoint = .now
                    let pruned = try await engine.prune(now: Date().timeIntervalSince1970)
                    if pruned != ServiceStore.Pruned() {
                        logger.info(
                            "dropped what is past --retention",
                            metadata: [
                                "journalRows": "\(pruned.journalRows)", "events": "\(pruned.events)",
                                "deliveriesGivenUp": "\(pruned.deliveries)",
                            ])
                    }
                } else if ContinuousClock.now - lastCheckpoint >= .seconds(checkpointInterval) {
                    lastCheckpoint = .now
                    try await engine.checkpoint()
                }
            } catch {
                logger.error("housekeeping failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// `--clock wall`: a journaled tick to the wall clock every second (SPEC §11, clock).
private struct WallClock: Service {
    let gate: ServiceGate
    let logger: Logger

    func run() async throws {
        guard let engine = await gate.waitForEngine() else { return }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            // Whole milliseconds, as the journal line writes them.
            let now = Timestamp(microseconds: Int64(Date().timeIntervalSince1970 * 1000) * 1000)
            do {
                try await engine.tick(now: now)
            } catch {
                logger.error("the wall-clock tick failed", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// Where the service stands while it starts: the port it listens on, and once recovered the
/// engine and the routes that use it. "serving on" is announced when both are known.
final class ServiceGate: Sendable {
    private struct State {
        var port: Int?
        var engine: ServiceEngine?
        var responder: RouterResponder<ServiceContext>?
        var announced = false
    }

    private let state = Mutex(State())
    private let host: String
    private let announce: @Sendable (String) -> Void

    init(host: String, announce: @escaping @Sendable (String) -> Void) {
        self.host = host
        self.announce = announce
    }

    /// The routes of the recovered engine, `nil` while it is recovered.
    var responder: RouterResponder<ServiceContext>? { state.withLock { $0.responder } }

    /// The recovered engine, `nil` while it is recovered.
    var engine: ServiceEngine? { state.withLock { $0.engine } }

    func bound(port: Int) {
        let recovering = state.withLock {
            $0.port = port
            return $0.responder == nil
        }
        if recovering {
            announce(
                "fenceline: listening on http://\(host):\(port), recovering its state (/readyz answers 503 until ready)"
            )
        }
        announceIfReady()
    }

    func open(engine: ServiceEngine, responder: RouterResponder<ServiceContext>?) {
        state.withLock {
            $0.engine = engine
            $0.responder = responder
        }
        announceIfReady()
    }

    /// The engine once recovered; `nil` if the service shuts down first.
    func waitForEngine() async -> ServiceEngine? {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if let engine { return engine }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    private func announceIfReady() {
        let port: Int? = state.withLock { state in
            guard !state.announced, state.responder != nil, let port = state.port else { return nil }
            state.announced = true
            return port
        }
        if let port { announce("fenceline: serving on http://\(host):\(port)") }
    }
}

/// The service's routes once the engine is recovered, the starting ones before.
struct GatedResponder: HTTPResponder {
    typealias Context = ServiceContext
    let gate: ServiceGate
    let starting: RouterResponder<ServiceContext>

    func respond(to request: Request, context: ServiceContext) async throws -> Response {
        let routes = gate.responder ?? starting
        var response = try await routes.respond(to: request, context: context)
        // Hummingbird's generated HEAD gives every answer an empty body of length 0, which a GET
        // whose body streams (the export, the event stream) must not claim (RFC 9110 §8.6): a
        // body of unknown length leaves the length out.
        if request.method == .head, response.headers[.contentLength] == "0" {
            response.body = ResponseBody { _ in }
        }
        return response
    }
}
