public import Logging

/// What a checkpoint holds, read from its header without building an engine (`fenceline inspect`).
public struct CheckpointSummary: Hashable, Sendable {
    /// The format version.
    public var version: Int
    /// The engine's clock; `nil` before the first reading.
    public var clock: Timestamp?
    /// Pending requests (those of a start catalog not yet added included).
    public var requests: Int
    /// Devices the engine knows.
    public var devices: Int
    /// Timers waiting (delays, dwells, beacon timeouts, time and calendar triggers).
    public var pendingTimers: Int
    /// Readings held by a reorder window.
    public var heldReadings: Int
    /// Delivered notifications kept.
    public var delivered: Int
    /// The `seq` the next event will get.
    public var nextSequence: Int
    /// The size of the whole file in bytes.
    public var bytes: Int
}

extension Engine {
    /// The first bytes of every checkpoint: a line of text, so a person (or `file`) can tell one.
    static let checkpointMagic = Array("FENCELINE-CHECKPOINT\n".utf8)
    /// The format this build writes.
    public static let checkpointVersion = 5
    /// The versions this build reads: 1 lacks attachments and responses, 2 position filters (read
    /// as none), 3 proximity pairs, 4 the held readings' leads on arrival, so a service's store
    /// written before them resumes.
    static let readableVersions = 1...checkpointVersion
    /// Magic, version (4 bytes), payload length and checksum (8 bytes each).
    static var headerSize: Int { checkpointMagic.count + 20 }

    /// The engine's complete state as bytes (SPEC §10): the requests as amended, categories,
    /// clock, every device's standings, streaks, timers, smoothing windows and proximity classes,
    /// readings held by the reorder window, `repeats: false` use, delivered notifications, events
    /// of an instant not yet closed and the next `seq`. ``init(resuming:configuration:logger:)``
    /// goes on from it exactly.
    ///
    /// Caches that change no event (safe discs, certificates, the spatial index) are not kept:
    /// they are rebuilt or measured again. Call it between readings; drivers that write a
    /// checkpoint at the end of a run first close the instant at the clock
    /// (``finish(until:keepingHeldReadings:)``), so nothing is left unreleased.
    public func checkpoint() -> [UInt8] {
        checkpointCache.checkpoints += 1
        let keepsEncodings = checkpointCache.keepsFromFirst || checkpointCache.checkpoints > 1
        if keepsEncodings { encodeMissingRequests() }
        var writer = CheckpointWriter()
        // The file is written in one buffer, its header filled in at the end: a copy of a state of
        // tens of megabytes (a large catalog) is a noticeable part of a checkpoint.
        writer.reserve(
            Self.headerSize + 64 + devices.count * 96 + requests.count * 64
                + checkpointCache.requests.reduce(0) { $0 + $1.count })
        let live = writeCheckpointHead(into: &writer)
        writer.append(encoded: checkpointCache.givenDigests!)
        writeCheckpointDeviceList(live, into: &writer)
        writer.writeCount(live.slots.count)
        for slot in live.slots {
            if keepsEncodings {
                writer.append(encoded: checkpointCache.requests[slot])
            } else {
                writer.write(requests[slot].request)
            }
            Self.writeCheckpointState(of: requests[slot], states[slot], into: &writer)
        }
        writeCheckpointTail(live, into: &writer)
        return Self.sealed(&writer)
    }

    /// ``checkpoint()`` in parts that ``CheckpointParts/assembled()`` puts together on another
    /// thread, byte for byte the same: only what changes between checkpoints is written here, the
    /// requests' kept encodings (tens of megabytes with a large catalog) are shared, not copied,
    /// and their states are encoded where the parts are put together.
    package func checkpointParts() -> CheckpointParts {
        checkpointCache.checkpoints += 1
        encodeMissingRequests()
        var head = CheckpointWriter()
        head.reserve(Self.headerSize + 4_096)
        let live = writeCheckpointHead(into: &head)
        // The given requests' digests, kept encoded (megabytes with a large catalog given), are
        // shared between the head's pieces rather than copied in.
        var afterDigests = CheckpointWriter()
        writeCheckpointDeviceList(live, into: &afterDigests)
        afterDigests.writeCount(live.slots.count)
        var tail = CheckpointWriter()
        tail.reserve(64 + devices.count * 96)
        writeCheckpointTail(live, into: &tail)
        return CheckpointParts(
            head: [head.bytes, checkpointCache.givenDigests!, afterDigests.bytes],
            encodings: checkpointCache.requests, slots: live.slots,
            states: CheckpointSlotStates(entries: requests, states: states, slots: live.slots), tail: tail.bytes)
    }

    /// Encodes the live requests whose encodings are not kept yet, and keeps them.
    private func encodeMissingRequests() {
        checkpointCache.requests.append(
            contentsOf: repeatElement([], count: max(0, requests.count - checkpointCache.requests.count)))
        for slot in requests.indices {
            if !states[slot].isAlive {
                if !checkpointCache.requests[slot].isEmpty { checkpointCache.requests[slot] = [] }
            } else if checkpointCache.requests[slot].isEmpty {
                checkpointCache.requests[slot] = Self.encoding(of: requests[slot].request)
            }
        }
    }

    /// What the parts of a checkpoint after the requests need from before them.
    private struct LiveState {
        /// The live slots, in order.
        var slots: [Int]
        /// Each slot's number in the checkpoint; -1 for a dead one.
        var newSlot: [Int32]
        var timers: [EngineTimer]
        var nextOrder: UInt64
        var pending: [(event: Event, order: Int)]
        var produced: Int
        var ledger: [(event: Event, device: Int32, order: Int)]
        var held: [ReorderBuffer.HeldEntry]
        var arrivals: UInt64
        /// The names of devices dropped by renumbering that have visit counters, listed after the
        /// engine's devices with no state (see ``forgottenDeviceNames``).
        var forgotten: [String]
    }

    /// The summary, the engine's counters, categories, start catalog and untimed controls:
    /// everything before the given requests' digests (kept encoded in ``checkpointCache``, made
    /// here when missing), which the device list then follows.
    private func writeCheckpointHead(into writer: inout CheckpointWriter) -> LiveState {
        writer.append(encoded: Self.headerPlaceholder)
        let alive = requests.indices.filter { states[$0].isAlive }
        // Dead slots (replaced or removed requests) are dropped, with their records and timers,
        // which the engine would only ever discard; the live ones are numbered afresh in order.
        var newSlot = [Int32](repeating: -1, count: requests.count)
        for (index, slot) in alive.enumerated() { newSlot[slot] = Int32(index) }
        let (timerList, nextOrder) = timers.checkpointState
        let liveTimers = timerList.filter { $0.slot < 0 || states[Int($0.slot)].isAlive }
        let (pending, produced, released) = events.checkpointState
        let ledger = delivered.checkpointState
        let (held, arrivals) = reorder.checkpointState
        let forgotten = forgottenDeviceNames

        // The summary first, so `inspect` reads it without the rest.
        writer.write(clock) { $0.write($1) }
        writer.write(pendingRequestCount)
        writer.write(devices.count + forgotten.count)
        writer.write(liveTimers.count)
        writer.write(held.count)
        writer.write(ledger.count)
        writer.write(released + 1)

        writer.write(statistics.applied)
        writer.write(statistics.stale)
        writer.write(statistics.events)
        writer.write(statistics.filtered)
        writer.write(applySequence)
        writer.write(nextToken)
        writer.write(requestEpoch)
        writer.write(each: categories.values.sorted { $0.id < $1.id }) { $0.write($1) }
        writer.write(defaultHysteresis)
        writer.write(defaultFilters)
        writer.write(each: startCatalog) { $0.write($1) }
        writer.write(each: untimedControls) { $0.write($1) }
        // Each given request is hashed once for the engine's life: a service checkpoints often.
        if !givenRequests.isEmpty || checkpointCache.givenDigests == nil {
            for request in givenRequests { givenDigests[request.id] = Self.digest(of: request) }
            givenRequests = []
            checkpointCache.givenEpoch += 1
            checkpointCache.givenDigests = Self.encoded(digests: givenDigests)
        }
        return LiveState(
            slots: alive, newSlot: newSlot, timers: liveTimers, nextOrder: nextOrder, pending: pending,
            produced: produced, ledger: ledger, held: held, arrivals: arrivals, forgotten: forgotten)
    }

    /// The device names and accuracy buckets, which follow the given requests' digests.
    private func writeCheckpointDeviceList(_ live: LiveState, into writer: inout CheckpointWriter) {
        writer.write(each: devices.names + live.forgotten) { $0.write($1) }
        writer.write(each: devices.thresholds.indices) { writer, bucket in
            writer.write(devices.thresholds[bucket])
            writer.write(devices.bucketFilters[bucket])
        }
    }

    /// A live request's state, which follows its encoding.
    static func writeCheckpointState(of entry: RequestEntry, _ state: RequestState, into writer: inout CheckpointWriter)
    {
        writer.write(entry.addedSequence)
        writer.write(entry.addedTime)
        writer.write(state.isFinished)
        writer.write(state.nextFire) { $0.write($1) }
        writer.write(state.timerToken)
        writer.write(state.finishedDevices)
    }

    /// Every device's standings, the timers, the events of an open instant, the delivered
    /// notifications and the reorder window: everything after the requests.
    private func writeCheckpointTail(_ live: LiveState, into writer: inout CheckpointWriter) {
        let newSlot = live.newSlot
        writeCheckpointDevices(newSlot: newSlot, forgotten: live.forgotten, into: &writer)
        writeCheckpointProximity(newSlot: newSlot, into: &writer)
        writer.write(live.nextOrder)
        writer.write(each: live.timers) { writer, timer in
            writer.write(timer.due)
            writer.write(timer.setAt)
            writer.write(timer.order)
            writer.write(timer.kind.rawValue)
            writer.write(timer.slot < 0 ? -1 : newSlot[Int(timer.slot)])
            writer.write(timer.device)
            if timer.kind.isPair { writer.write(timer.other) }
            writer.write(timer.token)
        }
        writer.write(live.produced)
        writer.write(each: live.pending) { writer, item in
            writer.write(item.event)
            writer.write(item.order)
        }
        writer.write(each: live.ledger) { writer, entry in
            writer.write(entry.event)
            writer.write(entry.device)
            writer.write(entry.order)
        }
        writer.write(live.arrivals)
        writer.write(reorder.newestSeen) { $0.write($1) }
        writer.write(each: live.held) { writer, item in
            writer.write(item.time)
            writer.write(item.arrival)
            writer.write(item.reading)
            writer.write(item.lead) { $0.write($1) }
        }
    }

    /// A checkpoint file holding `payload` (tests and the fuzz harness forge files with it).
    static func sealed(_ payload: [UInt8]) -> [UInt8] {
        var writer = CheckpointWriter()
        writer.reserve(headerSize + payload.count)
        writer.append(encoded: headerPlaceholder)
        writer.append(encoded: payload)
        return sealed(&writer)
    }

    /// The magic, then zeros where ``sealed(_:)`` writes the rest of the header.
    static var headerPlaceholder: [UInt8] {
        checkpointMagic + [UInt8](repeating: 0, count: headerSize - checkpointMagic.count)
    }

    /// The checkpoint file `writer` holds, its header (written as zeros after the magic, then the
    /// payload) filled in: the version, the payload's length and checksum.
    static func sealed(_ writer: inout CheckpointWriter) -> [UInt8] {
        let payload = writer.bytes.count - headerSize
        let checksum = writer.bytes.withUnsafeBytes {
            CheckpointChecksum.of(UnsafeRawBufferPointer(rebasing: $0[headerSize...]))
        }
        var header = CheckpointWriter()
        header.write(UInt32(checkpointVersion))
        header.write(UInt64(payload))
        header.write(checksum)
        writer.overwrite(at: checkpointMagic.count, with: header.bytes)
        return writer.bytes
    }

    /// Reads the summary at the start of a checkpoint, checking the whole file is intact.
    /// - Throws: ``CheckpointError`` for a file that is not a checkpoint, of another version, or damaged.
    public static func checkpointSummary(of bytes: [UInt8]) throws -> CheckpointSummary {
        try bytes.withUnsafeBytes { raw in
            var reader = try payload(of: raw)
            var summary = CheckpointSummary(
                version: reader.version, clock: nil, requests: 0, devices: 0, pendingTimers: 0, heldReadings: 0,
                delivered: 0, nextSequence: 1, bytes: bytes.count)
            summary.clock = try reader.optional { try $0.timestamp() }
            summary.requests = try reader.int(in: 0...Int(Int32.max), "a request count")
            summary.devices = try reader.int(in: 0...Int(Int32.max), "a device count")
            summary.pendingTimers = try reader.int(in: 0...Int(Int32.max), "a timer count")
            summary.heldReadings = try reader.int(in: 0...Int(Int32.max), "a held reading count")
            summary.delivered = try reader.int(in: 0...Int(Int32.max), "a delivered count")
            summary.nextSequence = try reader.int(in: 1...Int(Int64.max), "the next seq")
            return summary
        }
    }

    /// The size of the whole checkpoint whose first bytes are `head` (at least its header, 45
    /// bytes), so a reader can refuse what is not a checkpoint, or is longer than one, before
    /// reading it whole.
    /// - Throws: ``CheckpointError`` when `head` is not the start of a checkpoint this build reads.
    public static func checkpointSize(fromHead head: [UInt8]) throws -> Int {
        let length = try head.withUnsafeBytes { try header(of: $0).length }
        guard length <= UInt64(Int.max - headerSize) else {
            throw CheckpointError(.damaged, "checkpoint is damaged: its header gives an impossible length")
        }
        return headerSize + Int(length)
    }

    /// The state's length and checksum from a checkpoint's header, its magic and version checked.
    private static func header(
        of raw: UnsafeRawBufferPointer
    ) throws -> (version: Int, length: UInt64, checksum: UInt64) {
        let magic = checkpointMagic
        guard raw.count >= magic.count, raw.prefix(magic.count).elementsEqual(magic) else {
            throw CheckpointError(
                .notACheckpoint, "not a Fenceline checkpoint (it does not start with FENCELINE-CHECKPOINT)")
        }
        guard raw.count >= headerSize else {
            throw CheckpointError(.damaged, "checkpoint is damaged: it ends inside its header (\(raw.count) bytes)")
        }
        var header = CheckpointReader(UnsafeRawBufferPointer(rebasing: raw[magic.count..<headerSize]))
        let version = Int(try header.uint32())
        guard readableVersions.contains(version) else {
            throw CheckpointError(
                .unsupportedVersion,
                "checkpoint format version \(version) cannot be read by this build, which reads versions \(readableVersions.lowerBound)…\(checkpointVersion)"
            )
        }
        return (version, try header.uint64(), try header.uint64())
    }

    /// The payload of a checkpoint after its header, length and checksum are checked.
    private static func payload(of raw: UnsafeRawBufferPointer) throws -> CheckpointReader {
        let (version, length, checksum) = try header(of: raw)
        guard length == UInt64(raw.count - headerSize) else {
            throw CheckpointError(
                .damaged,
                "checkpoint is damaged: its state should be \(length) bytes, the file holds \(raw.count - headerSize) (truncated?)"
            )
        }
        let payload = UnsafeRawBufferPointer(rebasing: raw[headerSize...])
        guard CheckpointChecksum.of(payload) == checksum else {
            throw CheckpointError(.damaged, "checkpoint is damaged: its checksum does not match its contents")
        }
        return CheckpointReader(payload, version: version)
    }

    /// An engine that goes on from a ``checkpoint()`` exactly as the engine that wrote it would have.
    ///
    /// `configuration` applies from here on (a reorder window's held readings come back from the
    /// checkpoint either way); give the one the writing engine had for a continuous run.
    /// - Throws: ``CheckpointError`` for bytes that are not a checkpoint, of another version, or
    ///   damaged; nothing of a damaged file is trusted (counts, indices and requests are checked).
    public convenience init(
        resuming bytes: [UInt8], configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "fenceline.engine", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        try self.init(catalog: Catalog(), configuration: configuration, logger: logger)
        do {
            try bytes.withUnsafeBytes { raw in
                var reader = try Self.payload(of: raw)
                try restore(from: &reader)
                guard reader.isAtEnd else { throw reader.damaged("bytes follow the end of the state") }
            }
        } catch let error as CheckpointError {
            throw error
        } catch {
            throw CheckpointError(.damaged, "checkpoint is damaged: \(error)")
        }
    }

    private func restore(from reader: inout CheckpointReader) throws {
        let clock = try reader.optional { try $0.timestamp() }
        // The rest of the summary, checked against the state at the end: a file whose summary
        // says otherwise was not written by an engine.
        let summaryCounts = try (0..<5).map { _ in try reader.int(in: 0...Int(Int32.max), "a count") }
        let largest = Int(CheckpointReader.largestCounter)
        let nextSequence = try reader.int(in: 1...largest, "the next seq")

        statistics.applied = try reader.int(in: 0...largest, "a count")
        statistics.stale = try reader.int(in: 0...largest, "a count")
        statistics.events = try reader.int(in: 0...largest, "a count")
        if reader.version >= 3 { statistics.filtered = try reader.int(in: 0...largest, "a count") }
        let applySequence = try reader.counter()
        let nextToken = try reader.counter()
        let requestEpoch = try reader.counter()
        let restoredCategories = try reader.array(typicalSize: 12) { try $0.category() }
        // Written sorted by id: anything else (a repeated id among them) was not written by an engine.
        guard zip(restoredCategories, restoredCategories.dropFirst()).allSatisfy({ $0.id < $1.id }) else {
            throw reader.damaged("the categories are not in order")
        }
        for category in restoredCategories { categories[category.id] = category }
        defaultHysteresis = try reader.hysteresis()
        if reader.version >= 3 { defaultFilters = try reader.positionFilters() }
        let catalog = try reader.array(typicalSize: 8) { try $0.request() }
        let untimed = try reader.array(typicalSize: 2) { try $0.controlRecord() }
        for (index, request) in catalog.enumerated() {
            try checkRequest(request, path: "startCatalog[\(index)]", reader: reader)
        }
        startCatalog = catalog
        for control in untimed {
            if case .add(let request) = control.operation { try checkRequest(request, path: "add", reader: reader) }
        }
        untimedControls = untimed
        let given = try reader.array(typicalSize: 12) { reader in (try reader.string(), try reader.uint64()) }
        guard zip(given, given.dropFirst()).allSatisfy({ $0.0 < $1.0 }) else {
            throw reader.damaged("the given requests are not in order")
        }
        givenRequests = []
        givenDigests = Dictionary(given, uniquingKeysWith: { _, last in last })

        let names = try reader.array(typicalSize: 4) { try $0.string() }
        let buckets = try reader.array(typicalSize: 8) { reader in
            (try reader.double(finite: false), reader.version >= 3 ? try reader.positionFilters() : PositionFilters())
        }
        let thresholds = buckets.map(\.0)
        // Every device holds 25 bytes or more per threshold further on: a table the file cannot
        // fill is refused before it is made.
        guard names.count * thresholds.count * 25 <= reader.remaining else {
            throw reader.damaged("\(names.count) devices × \(thresholds.count) thresholds run past the end")
        }
        guard thresholds.first == .infinity, buckets.first?.1.isEmpty == true else {
            throw reader.damaged("the accuracy thresholds are wrong")
        }
        for (threshold, filters) in buckets.dropFirst() { _ = devices.bucket(maxAccuracy: threshold, filters: filters) }
        guard devices.thresholds == thresholds, devices.bucketFilters == buckets.map(\.1) else {
            throw reader.damaged("an accuracy threshold is repeated")
        }
        devices.reserve(names.count)
        for (id, name) in names.enumerated() {
            guard devices.intern(name) == Int32(id), devices.count == id + 1 else {
                throw reader.damaged("device \"\(name)\" is listed twice")
            }
        }

        // The live requests, installed as when they were added, then their state.
        let count = try reader.count()
        if count > 0 && clock == nil { throw reader.damaged("requests are live before the clock is set") }
        var restoredStates: [RequestState] = []
        restoredStates.reserveCapacity(reader.reservation(for: count, typicalSize: 30))
        bulkInstalling = true
        restoring = true
        defer { restoring = false }
        slotsByID.reserveCapacity(reader.reservation(for: count, typicalSize: 30))
        for slot in 0..<count {
            let request = try reader.request()
            let addedSequence = try reader.counter()
            let addedTime = try reader.timestamp()
            try checkRequest(request, path: "requests[\(slot)]", reader: reader)
            guard liveSlot(ofRequest: request.id) == nil else {
                throw reader.damaged("request \"\(request.id)\" is live twice")
            }
            self.applySequence = addedSequence
            install(request, at: addedTime)
            guard requests.count == slot + 1 else { throw reader.damaged("request \"\(request.id)\" cannot be added") }
            var state = RequestState()
            state.isFinished = try reader.bool()
            state.nextFire = try reader.optional { try $0.timestamp() }
            state.timerToken = try reader.counter()
            state.finishedDevices = try reader.int(in: 0...Int(Int32.max), "a count of finished devices")
            restoredStates.append(state)
        }
        bulkInstalling = false
        index.rebuild()
        crossIndex.rebuild()
        guard devices.thresholds.count == thresholds.count, devices.count == names.count else {
            throw reader.damaged("a request's device or accuracy threshold is missing from the device table")
        }
        states = restoredStates

        let slots = Int32(requests.count)
        let deviceCount = Int32(devices.count)
        try restoreDevices(from: &reader, clock: clock)
        if reader.version >= 4 { try restoreProximity(from: &reader) }
        let nextOrder = try reader.counter()
        let timerList = try reader.array(typicalSize: 41) { reader in
            let due = try reader.timestamp()
            let setAt = try reader.timestamp()
            let order = try reader.uint64()
            let kind = try reader.rawCase(EngineTimer.Kind.self, "a timer kind")
            let slot = try reader.int32()
            let device = try reader.int32()
            // A time or calendar trigger's timer and an expiry belong to no device; a device's
            // time to live to no request.
            let deviceless = kind == .timing || kind == .expiry
            guard slot >= (kind == .deviceTTL ? -1 : 0), slot < slots, (kind == .deviceTTL) == (slot < 0),
                device >= (deviceless ? -1 : 0), device < deviceCount, order <= nextOrder
            else {
                throw reader.damaged("a timer names request slot \(slot) and device \(device)")
            }
            let other = kind.isPair ? try reader.int32() : -1
            guard !kind.isPair || (other >= 0 && other < deviceCount && other != device) else {
                throw reader.damaged("a pair's timer names device \(device) and other device \(other)")
            }
            let token = try reader.uint64()
            return EngineTimer(
                due: due, setAt: setAt, order: order, kind: kind, slot: slot, device: device, other: other,
                token: token)
        }
        // Written in (due, order) order: anything else was not written by an engine, and would
        // load into the same queue but write itself differently.
        guard zip(timerList, timerList.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw reader.damaged("timers are out of order")
        }
        timers = TimerQueue(restoring: timerList, nextOrder: nextOrder)
        let produced = try reader.int(in: 0...largest, "a count")
        let pending = try reader.array(typicalSize: 40) { reader in
            (event: try reader.event(), order: try reader.int(in: 0...produced, "an event's order"))
        }
        events = EventQueue(restoring: pending, produced: produced, released: nextSequence - 1)
        let ledger = try reader.array(typicalSize: 40) { reader in
            let event = try reader.event()
            let device = try reader.int32()
            guard device >= -1, device < deviceCount else {
                throw reader.damaged("a delivered entry names device \(device)")
            }
            // Format 1 kept no production orders (nor seqs): its entries cannot be numbered,
            // so they cannot be answered by a response either.
            let order = reader.version < 2 ? -1 : try reader.int(in: -1...produced, "a delivered entry's order")
            return (event: event, device: device, order: order)
        }
        // An unnumbered entry's event waits in the queue to be numbered; one whose order names
        // no queued event could never be, and would be scanned for at every release.
        let queued = Set(pending.map(\.order))
        if ledger.contains(where: { $0.event.sequence == 0 && $0.order >= 0 && !queued.contains($0.order) }) {
            throw reader.damaged("a delivered entry waits for an event the queue does not hold")
        }
        delivered = DeliveredLedger(limit: configuration.deliveredLimit, restoring: ledger)
        let arrivals = try reader.counter()
        let newestSeen = try reader.optional { try $0.timestamp() }
        let held = try reader.array(typicalSize: 20) { reader in
            (
                time: try reader.timestamp(), arrival: try reader.counter(), reading: try reader.reading(),
                // Format 5 keeps each reading's lead on arrival; before, it is unknown (no lead).
                lead: reader.version >= 5 ? try reader.optional { try $0.timeSpan() } : nil
            )
        }
        // Written in release order (time, then arrival): anything else was not written by an engine.
        guard zip(held, held.dropFirst()).allSatisfy({ ($0.time, $0.arrival) < ($1.time, $1.arrival) }) else {
            throw reader.damaged("the held readings are not in order")
        }
        reorder = ReorderBuffer(
            window: configuration.reorderWindow, restoring: held, arrivals: arrivals, newestSeen: newestSeen)

        self.clock = clock
        self.applySequence = applySequence
        self.nextToken = nextToken
        self.requestEpoch = requestEpoch
        // The delivered list as written: resuming with a smaller --delivered-limit trims it.
        let counts = [
            pendingRequestCount, devices.count, timers.checkpointState.0.count, reorder.checkpointState.0.count,
            ledger.count,
        ]
        guard counts == summaryCounts else {
            throw reader.damaged("its summary counts \(summaryCounts), the state holds \(counts)")
        }
        devices.reportingCount = devices.fixStates.count(where: { $0.lastTime != nil })
        // Devices with nothing but a name and visit counters were forgotten: the first call
        // renumbers to drop them again (not here, so that a checkpoint loaded and written again
        // is the same bytes). Devices a request names in `devices` are kept all the same.
        var scoped = Set<Int32>()
        for entry in requests { scoped.formUnion(entry.scope ?? []) }
        devices.forgottenSinceRenumbering = devices.fixStates.indices.count(where: {
            !devices.isKnown($0) && !scoped.contains(Int32($0))
        })
        renumberingAfterRestore = devices.forgottenSinceRenumbering > 0
    }

    /// Refuses a request the engine would not have accepted: a damaged file must not install one.
    private func checkRequest(_ request: NotificationRequest, path: String, reader: CheckpointReader) throws {
        let issues = issues(in: request, path: path, anyCategory: true)
        guard issues.isEmpty else { throw reader.damaged("an invalid request: \(CatalogError(issues: issues))") }
    }
}
