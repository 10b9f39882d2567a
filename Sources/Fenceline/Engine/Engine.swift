import GEOSBridge
import HeapModule
public import Logging

/// The trigger evaluation engine: feed it readings in event time, get notifications back.
///
/// ```swift
/// let engine = try Engine(catalog: catalog)
/// for reading in readings {
///     for event in engine.process(reading) { print(event) }
/// }
/// for event in engine.finish() { print(event) }
/// ```
///
/// The engine never reads a wall clock: time comes from the readings and from ``advance(to:)``.
/// Events of one instant are held until the instant closes (a later reading, ``advance(to:)`` or
/// ``finish(until:)``) so they leave in SPEC §4 order; the same input always gives the same events.
/// An engine and its GEOS context belong to one isolation domain. Its hot-path state is marked
/// `@exclusivity(unchecked)`: the engine is confined (not `Sendable`) and never lends these
/// properties out across an access, so the dynamic checks would only cost time per reading.
public final class Engine {
    /// Settings beyond the catalog.
    public struct Configuration: Sendable {
        /// Hold readings this long and release them in time order (`--reorder-window`); zero applies
        /// each reading as it comes.
        public var reorderWindow: TimeSpan
        /// Delivered notifications kept per device; the oldest are dropped beyond it.
        public var deliveredLimit: Int
        /// `--device-ttl`: a device silent this long after its last valid reading is forgotten, its
        /// fences exited with reason `expired` (SPEC §12); `nil` keeps every device.
        public var deviceTTL: TimeSpan?
        /// How events leave the engine. Only the sharded driver, which merges several engines'
        /// events itself, asks for `.asProduced`; a public engine always releases by instant, so
        /// no public call can lose events to the other mode.
        package var eventRelease = EventRelease.byInstant

        /// How events leave the engine.
        package enum EventRelease: Sendable {
            /// Held until their instant closes, then released in SPEC §4 order and numbered, by
            /// ``Engine/process(_:)-(Reading)``, ``Engine/advance(to:)`` and ``Engine/finish(until:)``.
            case byInstant
            /// Returned as produced, unsorted and unnumbered, by the `produce…` methods alone.
            case asProduced
        }

        /// Creates a configuration.
        public init(reorderWindow: TimeSpan = .zero, deliveredLimit: Int = 64, deviceTTL: TimeSpan? = nil) {
            self.reorderWindow = reorderWindow
            self.deliveredLimit = deliveredLimit
            self.deviceTTL = deviceTTL
        }
    }

    /// Counts of what the engine has seen.
    public struct Statistics: Hashable, Sendable {
        /// Readings and control records applied.
        public var applied = 0
        /// Readings skipped because their device had already reported a later time.
        public var stale = 0
        /// Fixes some request's position filters dropped or took only as a refresh (SPEC §12).
        public var filtered = 0
        /// Events released.
        public var events = 0
    }

    let configuration: Configuration
    let logger: Logger
    let context = GEOSContext()
    lazy var validator = RequestValidator(geometry: GeometryValidator(context: context))
    /// Requests of the start catalog, added when the first valid line sets the clock.
    var startCatalog: [NotificationRequest]
    var categories: [String: NotificationCategory]
    var defaultHysteresis: Hysteresis
    /// The catalog's `defaults.filters`: requests already carry them; their `maxFuture` is the
    /// line-level check (see ``futureRefusal(at:)``).
    var defaultFilters: PositionFilters

    /// The event-time clock: the largest time applied so far; `nil` before the first.
    @exclusivity(unchecked) public internal(set) var clock: Timestamp?
    /// What the engine has seen so far.
    @exclusivity(unchecked) public internal(set) var statistics = Statistics()

    @exclusivity(unchecked) var requests: [RequestEntry] = []
    /// `states[slot]`: what changes about each request.
    @exclusivity(unchecked) var states: [RequestState] = []
    /// `flatSlots[slot]`: the plain per-slot values the candidate loop reads, through
    /// `flatSlotBuffer`.
    @exclusivity(unchecked) var flatSlots: [HotSlot] = [] {
        didSet { renewFlatSlotBuffer() }
    }
    /// `flatSlots`' storage, read without retaining it: every access to an array stored in a class
    /// retains its buffer (per fix and per candidate), an atomic add, contended when forked engines
    /// on two cores share the buffer. Valid until `flatSlots` next changes, which renews it; `flatSlots` keeps
    /// the storage alive.
    @exclusivity(unchecked) private(set) var flatSlotBuffer = UnsafeBufferPointer<HotSlot>(start: nil, count: 0)

    private func renewFlatSlotBuffer() {
        flatSlotBuffer = flatSlots.withUnsafeBufferPointer { $0 }
    }
    /// The polygon fences' flat data, indexed by `HotSlot.polygon`.
    @exclusivity(unchecked) var polygons: [PolygonShape] = []
    @exclusivity(unchecked) var slotsByID = RequestIDTable()
    let index: SpatialIndex
    let crossIndex: SpatialIndex
    @exclusivity(unchecked) var stateSlots: [Int32] = []
    /// While a timer fires, the later of its due time and the clock when it was set, so produced
    /// events know what made them (see ``ProducedEvent/timerBound``).
    @exclusivity(unchecked) var firingBound: Timestamp?
    /// Set while the start catalog is installed, so the index is packed once at the end.
    @exclusivity(unchecked) var bulkInstalling = false
    /// Beacon requests by identity; a sighting looks up its exact key and the three wildcards.
    @exclusivity(unchecked) var beaconSlots: [BeaconKey: [Int32]] = [:]
    /// Live region requests whose enter area widens with a fix's accuracy (`generous`, `overlap`):
    /// while any is live, a safe disc cannot stand in for the index.
    @exclusivity(unchecked) var accuracyWideningRequests = 0
    /// Counts region request additions and removals (only those can move a fence a device may
    /// enter); a device's safe disc and a record's certificate hold only within one epoch.
    @exclusivity(unchecked) var requestEpoch: UInt64 = 0
    /// Off only in tests that check the safe discs change no event.
    @exclusivity(unchecked) var usesSafeDiscs = true
    /// Off only in tests that check the records' certificates change no event.
    @exclusivity(unchecked) var usesCertificates = true
    /// Records one device and request's steps for `explain`; `nil` (the usual) costs a check per fix.
    @exclusivity(unchecked) var tracer: RegionTracer?
    /// Takes the events of a long run of timers as each of its instants completes (see
    /// `fireTimers(before:inclusive:)`), for a driver that writes them as they come; answers
    /// `false` to stop the clock there (a signal, an output that failed). Unset, such events wait
    /// in memory for the reading or call that moved the clock, as every other event does.
    @exclusivity(unchecked) public var spill: (([Event]) -> Bool)?
    /// Whether ``spill`` stopped the clock short of where a reading, `advance(to:)` or
    /// `finish(until:)` was taking it: that reading was not applied and the engine moves no
    /// further. A checkpoint then holds the state at the ``clock`` it stopped at.
    @exclusivity(unchecked) public internal(set) var stoppedInJump = false
    /// Events a response released before its instant closed (see ``applyResponse(_:)``), handed
    /// out first by the next release.
    @exclusivity(unchecked) var releasedAhead: [Event] = []
    /// What became of the `respond` records applied since ``takeResponseOutcomes()`` last ran.
    @exclusivity(unchecked) var responseOutcomes: [ResponseOutcome] = []
    @exclusivity(unchecked) var devices = DeviceTable()
    @exclusivity(unchecked) var timers = TimerQueue()
    @exclusivity(unchecked) var events = EventQueue()
    @exclusivity(unchecked) var delivered: DeliveredLedger
    @exclusivity(unchecked) var applySequence: UInt64 = 0
    @exclusivity(unchecked) var nextToken: UInt64 = 0
    @exclusivity(unchecked) var untimedControls: [ControlRecord] = []
    /// Set by a `tick` record just applied: the instant at the clock closes with it (SPEC §11:
    /// events leave on a later reading or on a tick), so its events leave then.
    @exclusivity(unchecked) var tickClosesInstant = false
    @exclusivity(unchecked) var reorder: ReorderBuffer
    /// The live region requests of each bucket with position filters, in the order they were
    /// added (so by `addedSequence`): those new to a device are a suffix.
    @exclusivity(unchecked) var filteredSlots: [[Int32]] = [[]]
    /// Per-fix scratch of the filters: each bucket's verdict, and how far the fix is stamped
    /// ahead of the largest time applied before it (`nil` for the first).
    @exclusivity(unchecked) var filterVerdicts: [FilterVerdict] = []
    @exclusivity(unchecked) var fixLead: TimeSpan?
    /// While a reading the reorder window let out is applied, its lead on arrival (which is `nil`
    /// for the first reading): the lead ``fixLead`` takes instead of one measured from the clock.
    @exclusivity(unchecked) var arrivalLead: TimeSpan??
    /// The last visit number given per (request id, device) (see ``nextVisit(request:device:)``),
    /// keyed by the id's number in `visitIDs` and the device, packed: a million devices' first
    /// stays would otherwise each hold a string.
    @exclusivity(unchecked) var visitCounters: [UInt64: Int32] = [:]
    /// The request ids visits were counted for, numbered in the order first seen.
    @exclusivity(unchecked) var visitIDs: [String: UInt32] = [:]
    @exclusivity(unchecked) var visitNames: [String] = []
    /// The visit counters of devices dropped by renumbering (see ``renumberDevicesIfDue()``), by
    /// name: a device seen again takes its counts back at its next stay.
    @exclusivity(unchecked) var forgottenVisits: [ForgottenVisit: Int32] = [:]
    /// How many forgotten devices make renumbering worth it (at least half of the devices, too):
    /// lowered only by tests, which renumber at every chance.
    @exclusivity(unchecked) var renumberingMinimum = 4096
    /// Set by a checkpoint that lists forgotten devices (kept for their visit counters): the first
    /// call renumbers, however few they are, rather than hold them until many more are forgotten.
    @exclusivity(unchecked) var renumberingAfterRestore = false
    /// How many times the engine dropped forgotten devices (a service then returns the freed pages).
    @exclusivity(unchecked) package internal(set) var renumberings = 0
    /// The live proximity requests, in the order they were added, each with its devices and pairs.
    @exclusivity(unchecked) var proximity: [ProximityBinding] = []
    /// Per-fix scratch: whether some request's position filters counted the fix already (it is
    /// counted once), and the devices whose pairs with the fix's device are evaluated.
    @exclusivity(unchecked) var fixFiltered = false
    @exclusivity(unchecked) var pairScratch: [Int32] = []
    /// Per-fix scratch: candidate slots, and the stamp that deduplicates them.
    @exclusivity(unchecked) var candidates: [Int32] = []
    /// Per-fix scratch: the slots of the records ``stepSettledRecords(_:device:)`` did not settle.
    @exclusivity(unchecked) var unsettledSlots: [Int32] = []
    @exclusivity(unchecked) var visited: [UInt32] = []
    @exclusivity(unchecked) var visitStamp: UInt32 = 0
    /// Set on forks (``fork()``): every engine of a sharded run applies the same request changes,
    /// and only the first one logs them (``requestLogger``), so each message appears once. Last,
    /// with the next, so the hot properties above keep their places.
    private(set) var isFork = false
    /// In a sharded run, which devices' time and calendar notifications this engine delivers:
    /// those of its own devices (`owns`) and, in one engine (`unscoped`), those for no device.
    /// Every engine keeps every timer, so a device's notifications all lie in its own engine's
    /// delivered list, which its `removeDevice`, time to live and limit then see whole. `nil`:
    /// all of them.
    package var timingOwnership: (owns: (String) -> Bool, unscoped: Bool)?
    /// The catalogs this engine's run was given (at creation, and on each resume), as requests and,
    /// from a checkpoint, as digests: a resumed run given the same catalog again adds none of it,
    /// whatever control records did to those requests since (SPEC §10 continuity).
    var givenRequests: [NotificationRequest] = []
    /// The settings of the region request installed last, which the next one shares when its
    /// own are the same (see ``RegionEntry``).
    var lastRegionSettings: RegionSettings?
    /// Every region settings object slots point into (``HotSlot/settings``), kept while the
    /// slots may be read, as `polygons` keeps the polygons' blocks.
    var regionSettings: [RegionSettings] = []
    var givenDigests: [String: UInt64] = [:]
    /// What checkpoints write that changes only with the requests, kept by an engine that
    /// checkpoints again and again (a service): each request's encoding by slot (empty until
    /// encoded) and the sorted given digests. With a large catalog these are most of the work.
    var checkpointCache = CheckpointCache()
    /// Set while a checkpoint's requests are installed: their timers and state come from the
    /// checkpoint, so installing schedules nothing.
    var restoring = false
    /// The logger for messages about requests (added, replaced, refused); `nil` on a fork.
    var requestLogger: Logger? { isFork ? nil : logger }

    /// Creates an engine for `catalog`. Its requests are validated now and added when the first
    /// valid reading sets the clock (SPEC §4).
    /// - Throws: ``CatalogError`` listing every invalid request.
    public init(
        catalog: Catalog, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "fenceline.engine", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        self.configuration = configuration
        self.index = SpatialIndex()
        self.crossIndex = SpatialIndex()
        self.delivered = DeliveredLedger(limit: configuration.deliveredLimit)
        self.reorder = ReorderBuffer(window: configuration.reorderWindow)
        self.events = EventQueue(passesThrough: configuration.eventRelease == .asProduced)
        self.logger = logger
        self.startCatalog = catalog.requests
        self.givenRequests = catalog.requests
        self.defaultHysteresis = catalog.defaultHysteresis
        self.defaultFilters = catalog.defaultFilters
        self.categories = Dictionary(catalog.categories.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        renewFlatSlotBuffer()  // an initializer does not run `didSet`
        guard !catalog.isValidated else { return }
        let issues = catalog.requests.enumerated().flatMap { index, request in
            self.issues(in: request, path: "requests[\(index)]")
        }
        if !issues.isEmpty { throw CatalogError(issues: issues) }
    }

    /// Applies one reading and returns the events whose instant it closed.
    ///
    /// A reading older than its device's last one is stale: skipped and counted. A reading moves
    /// the clock forward; timers due before its time fire first, at their due times.
    public func process(_ reading: Reading) -> [Event] {
        assert(configuration.eventRelease == .byInstant, "process(_:) on an engine that releases as produced")
        defer { renumberDevicesIfDue() }
        if configuration.reorderWindow > .zero, let time = reading.time {
            return applyReleasing(reorder.add(reading, at: time)) + release(before: clock, inclusive: false)
        }
        apply(reading)
        return release(before: clock, inclusive: takeTickClose())
    }

    /// Whether a `tick` just applied closes the instant at the clock (and forgets that it did).
    @inline(__always)
    func takeTickClose() -> Bool {
        defer { tickClosesInstant = false }
        return tickClosesInstant
    }

    /// Applies readings released by the reorder window in order, releasing the instant at the
    /// clock after each `tick` among them, as each would have been on its own. With a ``spill``
    /// set, those events go to it at once: a later reading's clock jump spills its own.
    private func applyReleasing(_ due: [ReorderBuffer.Released]) -> [Event] {
        var released: [Event] = []
        for reading in due {
            apply(reading)
            guard takeTickClose() && configuration.eventRelease == .byInstant else { continue }
            let closed = release(before: clock, inclusive: true)
            if let spill, !closed.isEmpty { _ = spill(closed) } else { released += closed }
        }
        return released
    }

    /// Applies one fix, as `process(.fix(fix))` does, without wrapping it in a ``Reading``.
    public func process(_ fix: Fix) -> [Event] {
        assert(configuration.eventRelease == .byInstant, "process(_:) on an engine that releases as produced")
        guard configuration.reorderWindow == .zero else { return process(.fix(fix)) }
        defer { renumberDevicesIfDue() }
        apply(fix)
        return release(before: clock, inclusive: false)
    }

    /// Whether readings wait in a reorder window (as whole ``Reading``s) before they apply.
    package var holdsReadings: Bool { configuration.reorderWindow > .zero }

    /// Applies a fix as `process(_:)` of a ``Fix`` does, its device named by UTF-8 bytes: a
    /// device already seen is found without making a `String` of its name (making one per line,
    /// with its UTF-8 check, was a few per cent of a run).
    package func process(
        deviceNamed name: UnsafeBufferPointer<UInt8>, time: Timestamp, coordinate: Coordinate, accuracy: Double?
    ) -> [Event] {
        assert(configuration.eventRelease == .byInstant, "process(_:) on an engine that releases as produced")
        guard configuration.reorderWindow == .zero else {
            let device = String(decoding: name, as: UTF8.self)
            return process(.fix(Fix(device: device, time: time, coordinate: coordinate, accuracy: accuracy)))
        }
        defer { renumberDevicesIfDue() }
        apply(deviceNamed: name, time: time, coordinate: coordinate, accuracy: accuracy)
        return release(before: clock, inclusive: false)
    }

    /// Moves the clock to `time` (never back), fires every timer due at or before it, and returns
    /// the events of every instant up to and including `time`.
    ///
    /// Use it when time passes without readings (a live feed); it declares that nothing stamped
    /// at or before `time` is still to come. With a reorder window, held readings up to
    /// `time - window` are released first and the clock stops there.
    public func advance(to time: Timestamp) -> [Event] {
        assert(configuration.eventRelease == .byInstant, "advance(to:) on an engine that releases as produced")
        defer { renumberDevicesIfDue() }
        var target = time
        var early: [Event] = []
        if configuration.reorderWindow > .zero {
            early = applyReleasing(reorder.observe(time))
            target = time.advanced(by: TimeSpan(microseconds: -configuration.reorderWindow.microseconds))
        }
        moveClock(to: target)
        fireTimers(before: target, inclusive: true)
        return early + release(before: target, inclusive: true)
    }

    /// Ends the input: applies held readings, moves the clock to `until` (default: the clock),
    /// fires every timer due at or before it and returns every remaining event.
    ///
    /// With `keepingHeldReadings` (a run about to write a ``checkpoint()``), readings held by the
    /// reorder window stay held, for the checkpoint to keep (SPEC §10); the instant at the clock
    /// still closes, so the events returned are all there are up to it.
    public func finish(until: Timestamp? = nil, keepingHeldReadings: Bool = false) -> [Event] {
        assert(configuration.eventRelease == .byInstant, "finish(until:) on an engine that releases as produced")
        defer { renumberDevicesIfDue() }
        guard keepingHeldReadings else {
            let early = closeInput(until: until)
            return early + release(before: nil, inclusive: true)
        }
        guard let end = [clock, until].compactMap({ $0 }).max() else { return [] }
        moveClock(to: end)
        fireTimers(before: end, inclusive: true)
        return release(before: end, inclusive: true)
    }

    /// Applies held readings, moves the clock to `until` (default: the clock) and fires every
    /// timer due by then, leaving the events in the queue but those a `tick` among the held
    /// readings released (returned).
    @discardableResult
    private func closeInput(until: Timestamp?) -> [Event] {
        let early = applyReleasing(reorder.release(through: nil))
        let end = [clock, until].compactMap { $0 }.max()
        if let end {
            moveClock(to: end)
            fireTimers(before: end, inclusive: true)
        }
        return early
    }

    /// What is wrong with the storage the hot path reads without retaining it, empty when
    /// nothing: the flat slots' pointer must be their current storage, one flat slot and one
    /// state per request, and both indexes sound (``SpatialIndex/invariantViolations()``). Tests
    /// call it on forked engines after every kind of change.
    func invariantViolations() -> [String] {
        var problems: [String] = []
        if flatSlotBuffer.baseAddress != flatSlots.withUnsafeBufferPointer({ $0.baseAddress })
            || flatSlotBuffer.count != flatSlots.count
        {
            problems.append("the flat slots' buffer is not their storage")
        }
        if flatSlots.count != requests.count || states.count != requests.count || visited.count != requests.count {
            problems.append("\(requests.count) requests, \(flatSlots.count) flat slots, \(states.count) states")
        }
        problems += index.invariantViolations().map { "index: \($0)" }
        problems += crossIndex.invariantViolations().map { "cross index: \($0)" }
        return problems
    }

    /// Releases events, numbers their delivered entries and counts them; events a response
    /// released ahead come first.
    func release(before limit: Timestamp?, inclusive: Bool) -> [Event] {
        var (released, orders) = events.release(before: limit, inclusive: inclusive)
        delivered.number(orders: orders, events: released)
        if !releasedAhead.isEmpty {
            released = releasedAhead + released
            releasedAhead = []
        }
        statistics.events += released.count
        return released
    }

    func makeToken() -> UInt64 {
        nextToken += 1
        return nextToken
    }
}

@available(*, unavailable)
extension Engine: Sendable {}

/// A request id's number (in `Engine.visitIDs`) and an interned device, packed: whose stays a
/// visit number counts.
enum VisitKey {
    static func make(request: UInt32, device: Int32) -> UInt64 {
        UInt64(request) << 32 | UInt64(UInt32(bitPattern: device))
    }

    static func device(of key: UInt64) -> Int32 { Int32(bitPattern: UInt32(truncatingIfNeeded: key)) }
    static func request(of key: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: key >> 32) }
}

extension Engine {
    /// A new engine with this one's requests, clock and devices but no events or delivered
    /// notifications, and of the timers only those of time and calendar requests (see
    /// ``timingOwnership``), sharing the immutable part of every request (fences, shapes, index
    /// storage) until one of them changes it. The sharded driver forks one engine per thread right
    /// after the catalog is added, before any reading, so the fences are prepared and held once.
    /// Fences measured with GEOS (the `overlap` mode) are prepared again on the fork's own GEOS
    /// context, which cannot be shared.
    package func fork() -> Engine {
        Engine(forking: self)
    }

    private convenience init(forking source: Engine) {
        try! self.init(catalog: Catalog(), configuration: source.configuration, logger: source.logger)
        isFork = true
        categories = source.categories
        defaultHysteresis = source.defaultHysteresis
        defaultFilters = source.defaultFilters
        clock = source.clock
        requests = source.requests
        for (slot, entry) in requests.enumerated() {
            guard let region = entry.region, region.fence.usesGEOS, case .region(let trigger) = entry.request.trigger,
                let fence = try? PreparedFence(trigger.geometry, context: context, needsOverlap: true)
            else { continue }
            requests[slot] = entry.replacing(
                region: RegionEntry(trigger: trigger, fence: fence, bucket: region.bucket, previous: region.settings))
        }
        states = source.states
        flatSlots = source.flatSlots
        renewFlatSlotBuffer()  // an initializer does not run `didSet`
        polygons = source.polygons
        regionSettings = source.regionSettings
        lastRegionSettings = source.lastRegionSettings
        slotsByID = source.slotsByID
        index.adopt(source.index)
        crossIndex.adopt(source.crossIndex)
        stateSlots = source.stateSlots
        filteredSlots = source.filteredSlots
        beaconSlots = source.beaconSlots
        accuracyWideningRequests = source.accuracyWideningRequests
        requestEpoch = source.requestEpoch
        devices = source.devices  // the interned ids request scopes refer to
        applySequence = source.applySequence
        nextToken = source.nextToken
        visited = Array(repeating: 0, count: source.visited.count)
        visitIDs = source.visitIDs
        visitNames = source.visitNames
        renumberingMinimum = source.renumberingMinimum
        renumberingAfterRestore = source.renumberingAfterRestore
        // Pairs span devices of every shard, so a sharded run never has proximity requests; a
        // fork still gets states of its own rather than sharing the source's.
        proximity = source.proximity.map {
            ProximityBinding(slot: $0.slot, state: ProximityState(trigger: $0.state.trigger, filters: $0.state.filters))
        }
        // Every engine exits its own devices when a request expires.
        for (slot, entry) in requests.enumerated() where states[slot].isAlive { scheduleExpiry(entry) }
        for (slot, entry) in requests.enumerated() where states[slot].isAlive && entry.timing != nil {
            guard let due = states[slot].nextFire else { continue }
            timers.schedule(
                .timing, due: due, setAt: clock, slot: Int32(slot), device: -1, token: states[slot].timerToken)
        }
    }
}

/// An event as it was produced, for drivers that order events themselves (the sharded pipeline).
package struct ProducedEvent: Sendable {
    /// The event, not yet numbered.
    package var event: Event
    /// Set when a timer (a delay, dwell, timeout or time trigger) produced it, rather than the
    /// reading or record being applied: the later of the timer's due time and the clock when it
    /// was set. One engine fires that timer when its clock first moves past this instant.
    package var timerBound: Timestamp?
    /// Its production order in its engine, by which the engine's delivered ledger knows the entry
    /// until the sharded merge tells it the `seq` (``Engine/numberDelivered(orders:events:)``).
    package var order: Int = 0

    /// Whether a timer produced it.
    package var byTimer: Bool { timerBound != nil }
}

extension Engine {
    /// Applies one reading and returns the events it produced, timers included, as produced (for an
    /// engine configured with `eventRelease: .asProduced`; see ``ProducedEvent``).
    package func produce(_ reading: Reading) -> [ProducedEvent] {
        assert(configuration.eventRelease == .asProduced)
        defer { renumberDevicesIfDue() }
        apply(reading)
        return events.drainProduced()
    }

    /// `produce(_:)` of a fix whose device is named by UTF-8 bytes, found as by
    /// ``process(deviceNamed:time:coordinate:accuracy:)``.
    package func produce(
        deviceNamed name: UnsafeBufferPointer<UInt8>, time: Timestamp, coordinate: Coordinate, accuracy: Double?
    ) -> [ProducedEvent] {
        assert(configuration.eventRelease == .asProduced)
        defer { renumberDevicesIfDue() }
        apply(deviceNamed: name, time: time, coordinate: coordinate, accuracy: accuracy)
        return events.drainProduced()
    }

    /// Tells the delivered ledger the `seq` the sharded merge gave the events this engine
    /// produced with production orders `orders` (a response may name a notification by `seq`).
    package func numberDelivered(orders: [Int], events: [Event]) {
        delivered.number(orders: orders, events: events)
    }

    /// Ends the input like ``finish(until:)`` and returns the events it produced, as produced.
    package func produceFinishing(until: Timestamp? = nil) -> [ProducedEvent] {
        assert(configuration.eventRelease == .asProduced)
        defer { renumberDevicesIfDue() }
        closeInput(until: until)
        return events.drainProduced()
    }
}
