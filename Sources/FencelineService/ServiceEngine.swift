import CoreMetrics
import Crypto
import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import Logging

/// The service's one engine and its store, behind an actor: batches of NDJSON lines go in one at
/// a time, and a batch is answered only once its lines and the events they released are committed
/// together, so a crash at any moment loses nothing that was answered and doubles nothing
/// (SPEC §11, durability).
///
/// On start the engine is rebuilt from the newest checkpoint and the journal after it; replaying
/// the journal gives exactly the events the log holds, which are not written again.
actor ServiceEngine {
    /// The answer to `POST /v1/readings`.
    struct IngestAnswer: Codable, Sendable, Equatable {
        struct LineProblem: Codable, Sendable, Equatable {
            var line: Int
            var reason: String
        }
        var accepted: Int
        var skipped: Int
        var stale: Int
        var errors: [LineProblem]
        var firstSeq: Int?
        var lastSeq: Int?

        /// Every member always, `firstSeq` and `lastSeq` `null` for a batch that released no
        /// event (SPEC §11 lists them in every answer).
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(accepted, forKey: .accepted)
            try container.encode(skipped, forKey: .skipped)
            try container.encode(stale, forKey: .stale)
            try container.encode(errors, forKey: .errors)
            try container.encode(firstSeq, forKey: .firstSeq)
            try container.encode(lastSeq, forKey: .lastSeq)
        }
    }

    /// Settings of the service's engine.
    struct Settings: Sendable {
        var configuration = Engine.Configuration()
        /// A checkpoint after this many journal lines.
        var checkpointEvery = 50_000
        /// The longest line accepted, in bytes.
        var maximumLineBytes = 1 << 20
        /// `--retention`: seconds the journal and the event log are kept; `nil`: for ever.
        var retention: Double?
        /// `--clock wall`: a line's lead (`maxFuture`) is measured from the wall clock.
        var wallClock = false
    }

    /// The most events one batch may release: a batch past it (a `tick` years ahead of a
    /// repeating timer, say) is refused whole rather than held in memory and committed at once.
    static let maximumBatchEvents = 100_000

    let store: ServiceStore
    let settings: Settings
    let metrics: ServiceMetrics
    /// The webhooks, kept here so that each batch's deliveries are chosen in its own commit.
    private var webhooks: [ServiceStore.Webhook]
    let logger: Logger
    /// The catalog a new store started from, as stored, and decoded once needed.
    let startBytes: [UInt8]
    var startCatalog: Catalog?
    var engine: Engine
    let decoder: NDJSONReadingDecoder
    /// The decoder's `add` context, whose category ids follow the engine's.
    let requestContext: NDJSONReadingDecoder.RequestContext
    private let encoder = NDJSONEventEncoder()
    /// The newest committed events as SSE frames, shared by the stream's subscribers.
    nonisolated let feed: EventFeed
    /// The journal position the engine's state covers, and where the last checkpoint was taken.
    var journalPosition = 0
    var checkpointPosition = 0
    /// Whether the store had a catalog before this start (then `--triggers` adds what changed).
    private var startedOnExistingStore = false

    /// Decodes a catalog file's bytes, its errors located as the caller words them.
    typealias CatalogDecoding = @Sendable ([UInt8]) throws -> Catalog

    /// Opens the engine over `store`: from its newest checkpoint and journal, or from the catalog
    /// `catalogBytes` on a new store (which keeps them, so a replay starts where this run did).
    /// `decodeCatalog` reads `catalogBytes` (with errors worded by the caller), only for a new
    /// store.
    init(
        store: ServiceStore, catalogBytes: [UInt8], decodeCatalog: CatalogDecoding, settings: Settings,
        metrics: ServiceMetrics, logger: Logger
    ) throws {
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        webhooks = try store.webhooks()
        feed = EventFeed(lastSeq: try store.lastSeq())
        let isNew: Bool
        var start: Catalog?
        let startBytes: [UInt8]
        if let stored = try store.meta("startCatalog") {
            startBytes = stored
            isNew = false
        } else {
            // Checked (with its located errors) before the store keeps it.
            start = try decodeCatalog(catalogBytes)
            try store.setMeta("startCatalog", catalogBytes)
            startBytes = catalogBytes
            isNew = true
        }
        self.startBytes = startBytes
        // With a checkpoint, the engine's requests, defaults and categories are its own: the start
        // catalog (seconds to decode when large) is decoded only if the engine is built from it.
        let engine: Engine
        let context: NDJSONReadingDecoder.RequestContext
        var position = 0
        if let checkpoint = try store.latestCheckpoint() {
            engine = try Engine(resuming: checkpoint.state, configuration: settings.configuration, logger: logger)
            context = NDJSONReadingDecoder.RequestContext(
                decoder: CatalogDecoder(), defaults: engine.requestDefaults, categories: engine.notificationCategories)
            position = checkpoint.journalPosition
        } else {
            let catalog = try start ?? CatalogDecoder().decode(startBytes).catalog
            start = catalog
            engine = try Engine(catalog: catalog, configuration: settings.configuration, logger: logger)
            context = NDJSONReadingDecoder.RequestContext(decoder: CatalogDecoder(), catalog: catalog)
        }
        engine.keepsCheckpointEncodings = true  // a service checkpoints again and again
        let lineDecoder = NDJSONReadingDecoder(requests: context)
        let (replayed, replayedLines) = try Self.replayJournal(
            into: engine, after: position, store: store, decoder: lineDecoder, logger: logger)
        // Properties with defaults first: once the others are set, the actor's init may not.
        startCatalog = start
        checkpointPosition = position
        journalPosition = replayed
        linesSinceCheckpoint = replayedLines
        startedOnExistingStore = !isNew
        self.engine = engine
        requestContext = context
        decoder = lineDecoder
    }

    /// `--triggers` on a store that has a catalog already: its requests are added (replacing by
    /// id) as journaled `add` records, but only those the engine does not have as they are, so
    /// that restarting with the same file changes nothing. (Categories and defaults stay those of
    /// the store's first catalog.) A file whose digest is that of the last one applied is not
    /// decoded again: it would only cost seconds of the restart.
    func addChangedRequests(catalogBytes: [UInt8], decodeCatalog: CatalogDecoding) async throws {
        let digest = Array(SHA256.hash(data: catalogBytes))
        if startedOnExistingStore {
            if try store.meta("triggersDigest") != digest {
                try await addRequests(changedIn: catalogBytes, decodeCatalog: decodeCatalog)
            } else {
                logger.info("--triggers is the file last applied: not read again")
            }
        }
        try store.setMeta("triggersDigest", digest)
    }

    private func addRequests(changedIn catalogBytes: [UInt8], decodeCatalog: CatalogDecoding) async throws {
        let catalog = try decodeCatalog(catalogBytes)
        let pending = engine.pendingRequests
        let changed = catalog.requests.indices.filter { index in
            !engine.hasRequest(identicalTo: catalog.requests[index]) && !pending.contains(catalog.requests[index])
        }
        // The JSON of the changed requests only: a restart with an edited file changes few.
        guard !changed.isEmpty,
            let root = try? JSONSerialization.jsonObject(with: Data(catalogBytes)) as? [String: Any],
            let objects = root["requests"] as? [Any], objects.count == catalog.requests.count
        else { return }
        var added = 0
        for index in changed {
            let request = catalog.requests[index]
            let record: [String: Any] = ["op": "add", "request": objects[index]]
            do {
                try await control(Array(try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])))
            } catch let error as LineError {
                throw TriggersRefused(request: request.id, reason: error.message)
            }
            added += 1
        }
        if added > 0 { logger.info("added requests from --triggers", metadata: ["requests": "\(added)"]) }
    }

    /// Applies one control record made by the API and returns what `look` found in the engine
    /// just before, read in the same actor call, so that an answer ("201 new", "removed: …")
    /// cannot be told wrong by a request between the two.
    func control<Found: Sendable>(_ line: [UInt8], lookingFirst look: @Sendable (Engine) -> Found) async throws
        -> Found
    {
        await waitWhilePaused()
        let found = look(engine)
        try await control(line)
        return found
    }

    /// Applies `line` only when `id` is a pending request; `false` (nothing applied) when not.
    func controlIfPending(_ id: String, _ line: [UInt8]) async throws -> Bool {
        await waitWhilePaused()
        guard hasRequest(id) else { return false }
        try await control(line)
        return true
    }

    /// Applies `line` only when a delivered notification of request `id` is listed; `false`
    /// (nothing applied) when none is.
    func controlIfDelivered(_ id: String, _ line: [UInt8]) async throws -> Bool {
        await waitWhilePaused()
        guard engine.hasDeliveredNotifications(ofRequest: id) else { return false }
        try await control(line)
        return true
    }

    /// Applies `line` only when the engine knows the device `id` (it has read it and not forgotten
    /// it); `false` (nothing applied) when not.
    func controlIfKnownDevice(_ id: String, _ line: [UInt8]) async throws -> Bool {
        await waitWhilePaused()
        guard engine.status(ofDevice: id) != nil else { return false }
        try await control(line)
        return true
    }

    /// Applies one control record made by the API (a request added, removed…), journaled like a
    /// line of readings so that the export and a replay see it where it happened.
    /// - Throws: ``LineError`` when the record is invalid (nothing is applied then).
    func control(_ line: [UInt8]) async throws {
        await waitWhilePaused()
        let reading = try line.withUnsafeBufferPointer { bytes throws(LineError) in try decoder.decode(bytes) }
        guard let reading else { return }
        let events = engine.process(reading)
        try await commit(journal: line, lines: 1, events: events, idempotency: nil)
    }

    /// Logs the refusals of `respond` records a reorder window held past their batch (their
    /// batch's answer could not tell them).
    func logHeldResponses(_ outcomes: [Engine.ResponseOutcome]) {
        for case let refusal? in outcomes.map(\.refusal) {
            logger.warning("refused a held response", metadata: ["reason": "\(refusal.message)"])
        }
    }

    /// Applies the `respond` record `line` (made by `POST /v1/responses`, without a time: at the
    /// clock) and returns its `response` event, not numbered yet. The record closes the instant
    /// at the clock first (SPEC §8 as the engine reads it), so a notification of that instant,
    /// already listed as delivered, can be answered.
    /// - Throws: ``LineError`` for a malformed record, ``ResponseRefusal`` for a refused one.
    func respond(_ line: [UInt8]) async throws -> Event {
        await waitWhilePaused()
        let reading = try line.withUnsafeBufferPointer { bytes throws(LineError) in try decoder.decode(bytes) }
        guard let reading, engine.clock != nil else {
            throw ResponseRefusal(.notDelivered, field: "seq", "no notification has been delivered yet")
        }
        var response: NotificationResponse?
        if case .control(let control) = reading, case .respond(let own) = control.operation { response = own }
        let events = engine.process(reading)
        let outcome = engine.takeResponseOutcomes().last { $0.response == response }
        // Journaled even when refused: the record closed the instant at the clock (its timers
        // fired), and a replay must close it there too.
        try await commit(journal: line, lines: 1, events: events, idempotency: nil)
        if let refusal = outcome?.refusal { throw refusal }
        guard let event = outcome?.event else {
            throw ResponseRefusal(.notDelivered, field: "seq", "the response was not applied")
        }
        return event
    }

    /// `--clock wall`: moves the clock to `now` with a journaled `tick` record, as a reading
    /// stamped `now` would, so a replay of the journal (or `fenceline run` over the export) makes
    /// the same moves. The first tick sets a clock no reading has set yet: time and calendar
    /// triggers fire on the wall clock with no device reporting, and a catalog given at start is
    /// added then (SPEC §7). Nothing happens when `now` is not later than the clock.
    func tick(now: Timestamp) async throws {
        await waitWhilePaused()  // the clock is read after any pause: a reload may have moved it
        if let clock = engine.clock, now <= clock { return }
        let line = Array(#"{"time":"\#(now.rfc3339)","op":"tick"}"#.utf8)
        try await control(line)
    }

    /// The category set, sorted by id.
    func categories() -> [NotificationCategory] {
        engine.notificationCategories
    }

    /// Replaces the category set with the `setCategories` record `line` (journaled), unless a
    /// pending request names a category it drops.
    /// - Throws: ``LineError`` for an invalid set, ``CategoryInUse`` (nothing applied then).
    func replaceCategories(_ line: [UInt8]) async throws -> [NotificationCategory] {
        await waitWhilePaused()
        let reading = try line.withUnsafeBufferPointer { bytes throws(LineError) in try decoder.decode(bytes) }
        guard case .control(let control)? = reading, case .setCategories(let list) = control.operation else {
            return engine.notificationCategories
        }
        let kept = Set(list.map(\.id))
        if let request = engine.pendingRequests.first(where: { $0.content.category.map { !kept.contains($0) } ?? false }
        ) {
            requestContext.reset(categories: engine.notificationCategories)  // decoding moved it on
            throw CategoryInUse(category: request.content.category ?? "", request: request.id)
        }
        try await commit(journal: line, lines: 1, events: engine.process(.control(control)), idempotency: nil)
        return engine.notificationCategories
    }

    /// Registers a webhook: the events of every batch committed from now on that match it.
    func addWebhook(_ webhook: ServiceStore.Webhook) throws {
        try store.addWebhook(webhook)
        webhooks.append(webhook)
    }

    /// Removes a webhook and its undelivered events; `false` when there was none.
    func removeWebhook(id: String) throws -> Bool {
        let removed = try store.removeWebhook(id: id)
        webhooks.removeAll { $0.id == id }
        return removed
    }

    /// Sets the gauges a scrape of `/metrics` reads: devices known and requests pending.
    func updateGauges() {
        metrics.devices.record(engine.deviceCount)
        metrics.requests.record(engine.pendingRequestCount)
    }

    /// Commits applied lines and their events: the batch joins the group being gathered and waits
    /// until that group is on disk (a group commit: batches applied while one group is written go
    /// to disk together in the next, with one sync for all). Batches are applied and written in
    /// the same order, so the journal replays exactly. If a write fails, the engine is rebuilt from
    /// the store and every batch not written is refused.
    @discardableResult
    func commit(journal: [UInt8], lines: Int, events: [Event], idempotency: (String, [UInt8])?) async throws
        -> [ServiceStore.LoggedEvent]
    {
        let logged = events.map { event in
            var json: [UInt8] = []
            encoder.encode(event, into: &json)
            if json.last == 0x0A { json.removeLast() }
            return ServiceStore.LoggedEvent(
                seq: event.sequence, kind: event.kind.rawValue, device: event.device, request: event.requestID,
                json: json)
        }
        var deliveries: [ServiceStore.Delivery] = []
        if !webhooks.isEmpty {
            for event in logged {
                for webhook in webhooks where webhook.matches(kind: event.kind, request: event.request) {
                    deliveries.append(.init(webhook: webhook.id, seq: event.seq, device: event.device))
                }
            }
        }
        gathering.append(
            ServiceStore.Batch(
                journal: journal, events: logged, deliveries: deliveries, idempotency: idempotency.map { ($0.0, $0.1) })
        )
        gatheringLines += lines
        if let key = idempotency?.0 { pendingKeys.insert(key) }
        try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
            gatheringWaiters.append(waiter)
            if !writing {
                writing = true
                Task { await self.writeGroups() }
            }
        }
        for (kind, count) in Dictionary(logged.map { ($0.kind, 1) }, uniquingKeysWith: +) {
            metrics.countEvents(kind: kind, count)
        }
        returnFreePagesAfterRenumbering()
        return logged
    }

    /// After the engine dropped forgotten devices (SPEC §12), gives the freed pages back to the
    /// system: a second later, so that the buffers of the batch that forgot them (its events'
    /// encodings, its answer) are freed too. Without it the resident size of a service whose
    /// fleet expired stays where it was.
    private func returnFreePagesAfterRenumbering() {
        guard engine.renumberings != renumberingsSeen else { return }
        renumberingsSeen = engine.renumberings
        Task.detached {
            try? await Task.sleep(for: .seconds(1))
            AllocatorTuning.returnFreePages()
        }
    }

    /// Batches applied and waiting to be written, with their callers.
    private var gathering: [ServiceStore.Batch] = []
    /// ``Engine/renumberings`` when the service last gave freed pages back.
    private var renumberingsSeen = 0
    /// The lines those batches journal, and the lines written since the last checkpoint (a
    /// journal row holds a batch, so positions do not count lines).
    private var gatheringLines = 0
    var linesSinceCheckpoint = 0
    private var gatheringWaiters: [CheckedContinuation<Void, any Error>] = []
    /// What the groups written since the last WAL checkpoint put in it, and how much goes in
    /// before the next: a group's lines and events, and at least three pages (a commit writes
    /// whole pages, so a single reading's takes two or three).
    private var walBytes = 0
    private static let walCheckpointBytes = 1 << 20
    private static let walBytesPerGroup = 3 * 4096
    /// Whether a group is being written (by ``writeGroups()``).
    private var writing = false
    /// The WAL copy under way, if any, and whether the last one found the WAL past
    /// ``ServiceStore/restartPages`` (the next group then finishes it on the writer).
    private var walCopy: Task<Void, Never>?
    private var walOutgrown = false
    /// The idempotency keys of batches applied but not yet written.
    var pendingKeys: Set<String> = []
    /// Callers waiting for everything applied to be written (``settle()``).
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Set while the engine is ahead of the store by a batch that is being refused (it goes back
    /// to what the store holds): nothing is applied meanwhile, and no checkpoint is taken.
    var paused = false
    private var pausedWaiters: [CheckedContinuation<Void, Never>] = []

    /// Writes the gathered batches as groups until none is left; the write runs off the actor, so
    /// the next group is gathered (applied) while this one is synced.
    private func writeGroups() async {
        while !gathering.isEmpty {
            let group = gathering
            let waiters = gatheringWaiters
            let lines = gatheringLines
            gathering = []
            gatheringWaiters = []
            gatheringLines = 0
            let store = self.store
            let written = await Task.detached { Result { try store.commit(group) } }.value
            for batch in group { if let key = batch.idempotency?.key { pendingKeys.remove(key) } }
            switch written {
            case .success(let position):
                journalPosition = position
                linesSinceCheckpoint += lines
                feed.committed(group.flatMap(\.events))
                for waiter in waiters { waiter.resume() }
                walBytes +=
                    Self.walBytesPerGroup
                    + group.reduce(0) { $0 + $1.journal.count + $1.events.reduce(0) { $0 + $1.json.count } }
                prepareCheckpointsAside()
                // Only with nothing gathered is the engine's state the store's: take its parts
                // then, and put them together and write them off the actor while ingest goes on;
                // one write at a time, and not more often than keeps checkpoints under a tenth of
                // the time (a large catalog makes each one cost half a second or more), nor while
                // new requests are being encoded aside for it.
                if gathering.isEmpty && linesSinceCheckpoint >= settings.checkpointEvery && checkpointWrite == nil
                    && !preparingAside
                    && ContinuousClock.now - lastCheckpoint.end >= lastCheckpoint.cost * 10,
                    let encoded = encodeCheckpoint()
                {
                    writeAside(encoded)
                }
                // The WAL is copied into the database while the next groups are applied and
                // committed (one copy at a time); when a copy finds the WAL grown past a few
                // megabytes (the copies race the commits, so it has not started over), the next
                // group finishes it here, on the writer, where the few frames left are copied
                // and the WAL then starts over.
                if walOutgrown && walCopy == nil {
                    walOutgrown = false
                    walBytes = 0
                    do { try await store.checkpointWALOnWriter() } catch {
                        logger.error("WAL checkpoint failed", metadata: ["error": "\(error)"])
                    }
                } else if walBytes >= Self.walCheckpointBytes && walCopy == nil {
                    walBytes = 0
                    walCopy = Task {
                        let copied: Result<Bool, any Error>
                        do { copied = .success(try await store.checkpointWAL()) } catch { copied = .failure(error) }
                        self.walCopied(copied)
                    }
                }
            case .failure(let error):
                // The engine went ahead of the store by this group and every batch applied since:
                // take it back to what the store holds and refuse them all.
                logger.error("commit failed; reloading the engine from the store", metadata: ["error": "\(error)"])
                let later = gatheringWaiters
                gathering = []
                gatheringWaiters = []
                gatheringLines = 0
                pendingKeys.removeAll()
                do { try reload() } catch {
                    logger.critical("could not reload the engine from the store", metadata: ["error": "\(error)"])
                }
                for waiter in waiters + later { waiter.resume(throwing: error) }
            }
        }
        writing = false
        let settled = settleWaiters
        settleWaiters = []
        for waiter in settled { waiter.resume() }
    }

    /// A WAL copy (``ServiceStore/checkpointWAL()``) ended.
    private func walCopied(_ result: Result<Bool, any Error>) {
        walCopy = nil
        switch result {
        case .success(let outgrown): walOutgrown = walOutgrown || outgrown
        case .failure(let error): logger.error("WAL checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    /// Waits for a WAL copy under way (at shutdown: the store is closed after it).
    func finishWALCopy() async {
        await walCopy?.value
    }

    /// Waits until every batch applied is written: the engine's state is then the store's.
    func settle() async {
        while writing || !gathering.isEmpty {
            await withCheckedContinuation { settleWaiters.append($0) }
        }
    }

    func waitWhilePaused() async {
        while paused { await withCheckedContinuation { pausedWaiters.append($0) } }
    }

    func resume() {
        paused = false
        let waiting = pausedWaiters
        pausedWaiters = []
        for waiter in waiting { waiter.resume() }
    }

    /// A checkpoint being written off the actor, if one is.
    var checkpointWrite: Task<Void, Never>?

    /// When the last checkpoint ended and how long it took (encoding and writing).
    var lastCheckpoint = (end: ContinuousClock.now, cost: Duration.zero)

    /// Whether a ``prepareCheckpointsAside()`` is under way.
    var preparingAside = false
    /// Counts the engines ``reload()`` built: what was prepared for an earlier one does not fit.
    var reloads = 0
    /// The request table this engine's checkpoints refer to, once one is written.
    var requestTable: RequestTable?
}
