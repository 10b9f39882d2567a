public import Logging

/// The engine for Swift concurrency: a `Sendable` handle any task can feed, whose events arrive on
/// one `AsyncSequence` in order (SPEC §4) as their instants close.
///
/// ```swift
/// let session = try EngineSession(catalog: catalog)
/// let consumer = Task {
///     for await event in session.events { print(event.kind, event.requestID) }
/// }
/// try await session.process(readings)
/// let state = await session.checkpoint()    // keep it; EngineSession(resuming: state) goes on
/// await session.finish()                    // fires what is due, then ends `events`
/// await consumer.value
/// ```
///
/// The synchronous ``Engine`` inside is confined to the actor; use ``Engine`` itself in a tight
/// loop of one thread. `events` buffers what its reader has not taken yet, so a reader must keep
/// up (each call also returns its events, for a caller that would rather take them there).
public actor EngineSession {
    private let engine: Engine
    private let continuation: AsyncStream<Event>.Continuation
    /// Every event the session releases, in SPEC §4 order, numbered; it ends after ``finish(until:)``.
    public nonisolated let events: AsyncStream<Event>

    /// A session over `catalog`; its requests are added at the first reading's time.
    /// - Throws: ``CatalogError`` listing every invalid request.
    public init(
        catalog: Catalog, configuration: Engine.Configuration = Engine.Configuration(),
        logger: Logger = Logger(label: "fenceline.engine", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        engine = try Engine(catalog: catalog, configuration: configuration, logger: logger)
        (events, continuation) = AsyncStream.makeStream()
    }

    /// A session that goes on from a checkpoint (``checkpoint()`` or `run --checkpoint`).
    /// - Throws: ``CheckpointError`` when the bytes are not a checkpoint this build reads.
    public init(
        resuming state: [UInt8], configuration: Engine.Configuration = Engine.Configuration(),
        logger: Logger = Logger(label: "fenceline.engine", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        engine = try Engine(resuming: state, configuration: configuration, logger: logger)
        (events, continuation) = AsyncStream.makeStream()
    }

    /// Applies readings in order and publishes the events whose instants they closed.
    @discardableResult
    public func process(_ readings: some Sequence<Reading> & Sendable) -> [Event] {
        var released: [Event] = []
        for reading in readings { released += engine.process(reading) }
        return publish(released)
    }

    /// Applies one reading (a fix, a sighting or a control record).
    @discardableResult
    public func process(_ reading: Reading) -> [Event] {
        publish(engine.process(reading))
    }

    /// Moves the clock to `time` (a live feed's wall clock): fires what is due and publishes the
    /// events up to and including `time`.
    @discardableResult
    public func advance(to time: Timestamp) -> [Event] {
        publish(engine.advance(to: time))
    }

    /// Adds or replaces a request at the clock.
    /// - Throws: ``CatalogError`` when it is invalid.
    public func add(_ request: NotificationRequest) throws {
        try engine.add(request)
    }

    /// Applies a user's answer to a delivered notification (see ``Engine/respond(_:at:)``) and
    /// publishes the events released by then, the `response` event once its instant closes.
    /// - Throws: ``ResponseRefusal`` when it is refused.
    @discardableResult
    public func respond(_ response: NotificationResponse, at time: Timestamp? = nil) throws(ResponseRefusal) -> [Event]
    {
        do {
            return publish(try engine.respond(response, at: time))
        } catch {
            _ = publish(error.released)
            throw error
        }
    }

    /// Removes pending requests by id.
    public func removePendingRequests(withIdentifiers ids: [String]) {
        engine.removePendingRequests(withIdentifiers: ids)
    }

    /// Removes delivered notifications by request id.
    public func removeDeliveredNotifications(withIdentifiers ids: [String]) {
        engine.removeDeliveredNotifications(withIdentifiers: ids)
    }

    /// The requests that can still fire.
    public var pendingRequests: [NotificationRequest] { engine.pendingRequests }

    /// The delivered notifications, newest first.
    public var deliveredNotifications: [Event] { engine.deliveredNotifications }

    /// When a pending time or calendar request next fires.
    public func nextTriggerDate(forRequest id: String) -> Timestamp? {
        engine.nextTriggerDate(forRequest: id)
    }

    /// The event-time clock.
    public var clock: Timestamp? { engine.clock }

    /// The engine's whole state (``Engine/checkpoint()``), events of an open instant included, so
    /// ``init(resuming:configuration:logger:)`` goes on exactly; the session itself goes on too.
    public func checkpoint() -> [UInt8] {
        engine.checkpoint()
    }

    /// Ends the input: fires every timer due by `until` (default: the clock), publishes the rest
    /// and ends ``events``.
    @discardableResult
    public func finish(until: Timestamp? = nil) -> [Event] {
        defer { continuation.finish() }
        return publish(engine.finish(until: until))
    }

    private func publish(_ released: [Event]) -> [Event] {
        for event in released { continuation.yield(event) }
        return released
    }
}
