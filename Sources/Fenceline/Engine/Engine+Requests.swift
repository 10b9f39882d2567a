import Logging

extension Engine {
    /// Adds `request` at the clock, replacing a pending request with the same id (its trigger
    /// state starts afresh). Before the first reading it joins the start catalog. One whose
    /// `expires` the clock has passed leaves pending as it is added (SPEC §12).
    /// - Throws: ``CatalogError`` when the request is invalid.
    public func add(_ request: NotificationRequest) throws {
        let issues = issues(in: request, path: "request")
        guard issues.isEmpty else { throw CatalogError(issues: issues) }
        guard let clock else {
            startCatalog.removeAll { $0.id == request.id }
            startCatalog.append(request)
            return
        }
        install(request, at: clock)
    }

    /// Adds a catalog's categories (replacing by id) and requests, as ``add(_:)`` does each; with
    /// `keepingIdenticalRequests`, a request equal to one a catalog given to this run before
    /// (at its start, or on an earlier resume) is skipped: the run has it already, with whatever
    /// control records did to it since (how a resumed run takes its catalog again, SPEC §10).
    /// - Throws: ``CatalogError`` for the first invalid request; those before it are added.
    package func add(_ catalog: Catalog, keepingIdenticalRequests: Bool) throws {
        for category in catalog.categories { categories[category.id] = category }
        for request in catalog.requests {
            if keepingIdenticalRequests && wasGiven(request) { continue }
            try add(request)
            givenRequests.append(request)
        }
    }

    /// Whether a catalog given to this run before held `request` as it is.
    private func wasGiven(_ request: NotificationRequest) -> Bool {
        if let given = givenRequests.last(where: { $0.id == request.id }) { return given == request }
        return givenDigests[request.id] == Self.digest(of: request)
    }

    /// Whether the engine has `request` as it is: given by a catalog before, or added and not
    /// removed since (finished or not). The service adds a restart's `--triggers` requests only
    /// when it does not, so that restarting with the same file changes nothing.
    package func hasRequest(identicalTo request: NotificationRequest) -> Bool {
        if wasGiven(request) { return true }
        guard let slot = liveSlot(ofRequest: request.id) else { return false }
        return states[Int(slot)].isAlive && requests[Int(slot)].request == request
    }

    /// A request's digest as a checkpoint keeps it: the checksum of its encoding.
    static func digest(of request: NotificationRequest) -> UInt64 {
        encoding(of: request, asFormat1: true).withUnsafeBytes { CheckpointChecksum.of($0) }
    }

    /// Removes the pending requests with these ids; their state and timers go with them.
    public func removePendingRequests(withIdentifiers ids: [String]) {
        startCatalog.removeAll { ids.contains($0.id) }
        for id in ids {
            if let slot = liveSlot(ofRequest: id) { retire(slot) }
        }
    }

    /// Removes every pending request, location ones too.
    public func removeAllPendingRequests() {
        startCatalog.removeAll()
        for slot in slotsByID.slots.sorted() { retire(slot) }
    }

    /// The ids of the pending requests, in the order they were added.
    public var pendingRequestIDs: [String] { pendingRequests.map(\.id) }

    /// The issues of `request` with paths under `path`.
    /// With `anyCategory`, a category the set does not hold is not an issue: a checkpoint holds
    /// requests whose category a later `setCategories` dropped.
    func issues(in request: NotificationRequest, path: String, anyCategory: Bool = false) -> [CatalogIssue] {
        var known = Set(categories.keys)
        if anyCategory, let category = request.content.category { known.insert(category) }
        return validator.problems(in: request, categories: known).map { problem in
            CatalogIssue(
                requestID: request.id.isEmpty ? nil : request.id, path: "\(path).\(problem.path)",
                message: problem.message)
        }
    }

    func apply(_ operation: ControlRecord.Operation) {
        switch operation {
        case .add(let request):
            let issues = issues(in: request, path: "request")
            guard issues.isEmpty else {
                requestLogger?.warning(
                    "ignored an invalid request", metadata: ["issues": "\(CatalogError(issues: issues))"])
                return
            }
            install(request, at: clock ?? Timestamp(microseconds: 0))
        case .removePending(let ids):
            removePendingRequests(withIdentifiers: ids)
        case .removeAllPending:
            removeAllPendingRequests()
        case .removeDelivered(let ids):
            removeDeliveredNotifications(withIdentifiers: ids)
        case .removeAllDelivered:
            removeAllDeliveredNotifications()
        case .tick:
            // The instant at the clock is complete, as at a checkpoint's end: its timers fire
            // now and its events leave (a run cut before the tick writes the same).
            if let clock { fireTimers(before: clock, inclusive: true) }
            tickClosesInstant = true
        case .setCategories(let list):
            categories = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        case .respond(let response):
            // The user answers what they were shown: the instant at the clock closes first, as a
            // tick closes it, so a notification of that instant is delivered and numbered too.
            if let clock { fireTimers(before: clock, inclusive: true) }
            applyResponse(response)
        case .removeDevice(let names):
            removeDevices(names)
        }
    }

    /// The hysteresis defaults `add` records are read with (the catalog's `defaults`).
    public var hysteresisDefaults: Hysteresis { defaultHysteresis }

    /// The defaults `add` records are read with: the catalog's `defaults`, hysteresis and filters.
    public var requestDefaults: RequestDefaults {
        RequestDefaults(hysteresis: defaultHysteresis, filters: defaultFilters)
    }

    /// The category set, sorted by id. Before the first reading, a `setCategories` record waits
    /// for the clock (SPEC §7), and the set it will make is shown here already.
    public var notificationCategories: [NotificationCategory] {
        let waiting = untimedControls.isEmpty ? nil : previewUntimedControls(.noRequests).categories
        return (waiting ?? Array(categories.values)).sorted { $0.id < $1.id }
    }

    /// The slot of the live request `id`, if there is one.
    func liveSlot(ofRequest id: String) -> Int32? {
        slotsByID.slot(of: id) { requests[Int($0)].request.id }
    }

    /// Installs a start catalog's requests in order, as ``install(_:at:fingerprint:)`` does each,
    /// with what each will read prefetched ahead of it: a million requests' boxes lie scattered
    /// through memory and their ids' places in `slotsByID` at random, a cache miss each. A box is
    /// prefetched `2 * ahead` requests early; `ahead` requests early its id (in the box by then)
    /// is hashed and its place prefetched.
    func installAll(_ catalog: [NotificationRequest], at time: Timestamp) {
        // The id table and the per-slot arrays take their final size at once rather than
        // doubling (and copying) their way up to it.
        slotsByID.reserveCapacity(slotsByID.count + catalog.count)
        let total = requests.count + catalog.count
        requests.reserveCapacity(total)
        states.reserveCapacity(total)
        flatSlots.reserveCapacity(total)
        visited.reserveCapacity(total)
        let ahead = 8
        for request in catalog.prefix(2 * ahead) { request.prefetch() }
        var fingerprints = catalog.prefix(ahead).map { RequestIDTable.fingerprint($0.id) }
        for fingerprint in fingerprints { slotsByID.prefetch(fingerprint: fingerprint) }
        for (position, request) in catalog.enumerated() {
            let ring = position % ahead
            let fingerprint = fingerprints[ring]
            if position + 2 * ahead < catalog.count { catalog[position + 2 * ahead].prefetch() }
            if position + ahead < catalog.count {
                fingerprints[ring] = RequestIDTable.fingerprint(catalog[position + ahead].id)
                slotsByID.prefetch(fingerprint: fingerprints[ring])
            }
            install(request, at: time, fingerprint: fingerprint)
        }
    }

    /// Makes `request` live at `time`, replacing any request with its id; one whose `expires` is
    /// before `time` replaces it but leaves pending at once.
    /// - Parameter fingerprint: the id's ``RequestIDTable/fingerprint(_:)``, when a bulk load
    ///   computed it to prefetch the id's place.
    func install(_ request: NotificationRequest, at time: Timestamp, fingerprint: UInt64? = nil) {
        let slot = Int32(requests.count)
        // The id is claimed for the new slot with one lookup; a request it replaces is retired after.
        let id = request.id
        if let replaced = slotsByID.claim(
            id, fingerprint: fingerprint ?? RequestIDTable.fingerprint(id), slot: slot,
            idOf: { requests[Int($0)].request.id })
        {
            retire(replaced)
            requestLogger?.debug("replaced request", metadata: ["request": "\(request.id)"])
        }
        let scope = request.devices.map { Set($0.map { devices.intern($0) }) }
        // Read once: each read of the request's trigger copies it (retaining what it holds), a
        // million times over for a million fences.
        let trigger = request.trigger
        var region: RegionEntry?
        if case .region(let trigger) = trigger {
            // Only a region request can void a safe disc or a certificate (a new fence to enter).
            requestEpoch &+= 1
            let hysteresis = trigger.hysteresis
            do {
                let fence = try PreparedFence(
                    trigger.geometry, context: context, needsOverlap: hysteresis.accuracy == .overlap)
                let bucket = devices.bucket(maxAccuracy: hysteresis.maxAccuracy ?? .infinity, filters: request.filters)
                let entry = RegionEntry(trigger: trigger, fence: fence, bucket: bucket, previous: lastRegionSettings)
                if entry.settings !== lastRegionSettings { regionSettings.append(entry.settings) }
                lastRegionSettings = entry.settings
                region = entry
            } catch {
                slotsByID.remove(request.id, slot: slot)
                requestLogger?.error(
                    "could not prepare the fence", metadata: ["request": "\(request.id)", "error": "\(error)"])
                return
            }
        }
        var beacon: BeaconEntry?
        var timing: TimingEntry?
        switch trigger {
        case .beacon(let trigger):
            beacon = BeaconEntry(trigger: trigger)
        case .timeInterval(let trigger):
            let first = (trigger.start ?? time).advanced(by: trigger.interval)
            timing = TimingEntry(
                rule: .interval(first: first, every: trigger.interval), repeats: trigger.repeats, kind: .timeInterval)
        case .calendar(let trigger):
            guard let rule = CalendarRule(trigger) else {
                slotsByID.remove(request.id, slot: slot)
                requestLogger?.error(
                    "unknown time zone", metadata: ["request": "\(request.id)", "timeZone": "\(trigger.timeZone)"])
                return
            }
            timing = TimingEntry(rule: .calendar(rule), repeats: trigger.repeats, kind: .calendar)
        case .region, .proximity:
            break
        }
        let gate = request.schedule.flatMap(ScheduleGate.init)
        let entry = RequestEntry(
            request: request, slot: slot, addedSequence: applySequence, addedTime: time, scope: scope, region: region,
            beacon: beacon, gate: gate, timing: timing)
        requests.append(entry)
        states.append(RequestState())
        // The region's fence and settings are read once: each read through the optional entry
        // would copy it (three references), a million times over for a million fences.
        let fence = region?.fence
        if case .polygon(let shape)? = fence?.shape { polygons.append(shape) }
        flatSlots.append(HotSlot(entry: entry, polygon: polygons.count - 1))
        visited.append(0)
        // Added with its `expires` already passed (SPEC §12: it leaves pending when the clock
        // passes it), it is dead from the start: no device is inside a request added now, so
        // nothing exits, and nothing of this instant evaluates it. It is never indexed or listed,
        // so a catalog of many such requests costs no more than its live ones.
        if !restoring, let expires = request.expires, expires < time {
            states[Int(slot)].isAlive = false
            flatSlots[Int(slot)].isAlive = false
            slotsByID.remove(id, slot: slot)
            requestLogger?.debug("request added expired", metadata: ["request": "\(request.id)"])
        } else {
            activate(
                entry, request: request, trigger: trigger, fence: fence, region: region, beacon: beacon, timing: timing,
                at: time)
        }
        // However the id left the pending list (replaced now, removed or fired before), its
        // delivered entries take the new content and move to the top (SPEC §8).
        if !restoring && delivered.holdsEntries(of: request.id) {
            delivered.replace(
                requestID: request.id, content: request.content,
                actions: request.content.category.flatMap { categories[$0]?.actions } ?? [], at: clock)
        }
    }

    /// Indexes and lists a request `install` made live, and schedules its timers. Its parts come
    /// as `install` read them, each once (a million fences read them a million times).
    private func activate(
        _ entry: RequestEntry, request: NotificationRequest, trigger: Trigger, fence: PreparedFence?,
        region: RegionEntry?, beacon: BeaconEntry?, timing: TimingEntry?, at time: Timestamp
    ) {
        let slot = entry.slot
        if let fence, let settings = region?.settings.values.pointee {
            let bounds = fence.bounds
            index.insert(slot: slot, bounds: bounds.expanded(byMetres: settings.reach), packingLater: bulkInstalling)
            if settings.notifyOnCross {
                crossIndex.insert(slot: slot, bounds: bounds, packingLater: bulkInstalling)
            }
            if !bulkInstalling {
                index.compactIfNeeded()
                crossIndex.compactIfNeeded()
            }
            if settings.initial == .state { stateSlots.append(slot) }
            if settings.widensWithAccuracy { accuracyWideningRequests += 1 }
            if !request.filters.isEmpty {
                while filteredSlots.count <= settings.bucket { filteredSlots.append([]) }
                filteredSlots[settings.bucket].append(slot)
            }
        }
        if let beacon { beaconSlots[beacon.key, default: []].append(slot) }
        if case .proximity(let trigger) = trigger {
            proximity.append(
                ProximityBinding(slot: slot, state: ProximityState(trigger: trigger, filters: request.filters)))
        }
        if let timing, !restoring { scheduleTiming(entry, at: timing.firstDue(added: time)) }
        scheduleExpiry(entry)
    }

    /// Takes a request out: it no longer matches, and its records and timers are dropped lazily.
    func retire(_ slot: Int32) {
        let entry = requests[Int(slot)]
        guard states[Int(slot)].isAlive else { return }
        states[Int(slot)].isAlive = false
        flatSlots[Int(slot)].isAlive = false
        // Unless a request replacing it has claimed the id already (see `install`).
        slotsByID.remove(entry.request.id, slot: slot)
        if let region = entry.region {
            // Its records must be read again (and dropped) rather than settled by certificate.
            requestEpoch &+= 1
            index.remove(slot: slot)
            crossIndex.remove(slot: slot)
            index.compactIfNeeded()
            crossIndex.compactIfNeeded()
            stateSlots.removeAll { $0 == slot }
            if region.widensWithAccuracy { accuracyWideningRequests -= 1 }
            if !entry.request.filters.isEmpty { filteredSlots[region.bucket].removeAll { $0 == slot } }
        }
        if entry.triggerKind == .proximity { proximity.removeAll { $0.slot == slot } }
        if let beacon = entry.beacon {
            beaconSlots[beacon.key]?.removeAll { $0 == slot }
            if beaconSlots[beacon.key]?.isEmpty == true { beaconSlots[beacon.key] = nil }
        }
    }
}
