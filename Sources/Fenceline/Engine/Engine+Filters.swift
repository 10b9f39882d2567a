/// What a request's position filters make of a fix (SPEC §12).
enum FilterVerdict: UInt8 {
    /// Taken: evaluated, and the new reference.
    case accept
    /// Implies a move faster than `maxSpeed`, or stamped further ahead than `maxFuture`.
    case drop
    /// Closer than `minDistance` to the reference: only the reference's time moves.
    case refresh
    /// Less accurate than the bucket's `maxAccuracy`: not taken, and no reference change.
    case notAdmitted
}

extension Engine {
    /// The verdict of `filters` on `fix` against `reference` (the last fix accepted), `lead` being
    /// how far the fix is stamped ahead of the largest time read before it.
    static func judge(
        _ fix: Fix, reference: DeviceTable.AcceptedFix, filters: PositionFilters, lead: TimeSpan?
    ) -> FilterVerdict {
        // A lead is measured against the clock, not the reference: it may drop a first fix too.
        if let limit = filters.maxFuture, let lead, lead > limit { return .drop }
        guard reference.sequence > 0 else { return .accept }  // the first fix is otherwise taken
        guard filters.maxSpeed != nil || filters.minDistance != nil else { return .accept }
        let distance = reference.coordinate.distance(to: fix.coordinate)
        // Within a micrometre of a limit is at it, as for a fence's boundary: a move of exactly
        // maxSpeed, or a fix exactly minDistance away, is not decided by rounding.
        if let speed = filters.maxSpeed {
            let seconds = Double(fix.time.microseconds - reference.time.microseconds) / 1_000_000
            if seconds <= 0 ? distance > boundaryTolerance : distance > speed * seconds + boundaryTolerance {
                return .drop
            }
        }
        if let minimum = filters.minDistance, distance < minimum - boundaryTolerance { return .refresh }
        return .accept
    }

    /// Judges the fix for every filtered bucket into `filterVerdicts` and counts it when a
    /// filter would not take it. Returns whether any live filtered request might not take it,
    /// which sends the fix down the careful path (no settled or safe discs).
    func judgeFilters(_ fix: Fix, device: Int32, accuracy: Double) -> Bool {
        let buckets = devices.thresholds.count
        if filterVerdicts.count != buckets { filterVerdicts = Array(repeating: .accept, count: buckets) }
        var careful = devices.filterOverrides[device] != nil
        var filtered = false
        for bucket in 0..<buckets {
            guard accuracy <= devices.thresholds[bucket] else {
                filterVerdicts[bucket] = .notAdmitted
                continue
            }
            let filters = devices.bucketFilters[bucket]
            guard !filters.isEmpty else {
                filterVerdicts[bucket] = .accept
                continue
            }
            let verdict = Self.judge(
                fix, reference: devices.acceptedFix(device: device, bucket: bucket), filters: filters,
                lead: fixLead)
            filterVerdicts[bucket] = verdict
            if verdict != .accept && bucket < filteredSlots.count && !filteredSlots[bucket].isEmpty {
                careful = true
                filtered = true
            }
        }
        if let overrides = devices.filterOverrides[device] {
            for override in overrides where accuracy <= devices.thresholds[flatSlots[Int(override.slot)].bucket] {
                let filters = devices.bucketFilters[flatSlots[Int(override.slot)].bucket]
                if Self.judge(fix, reference: override.reference, filters: filters, lead: fixLead) != .accept {
                    filtered = true
                }
            }
        }
        if filtered {
            statistics.filtered += 1
            fixFiltered = true
        }
        return careful
    }

    /// The verdict for one request, after ``judgeFilters(_:device:accuracy:)``: its override's
    /// when it has one; `accept` for a request added since its bucket's reference was set (its
    /// first fix); else its bucket's.
    func filterVerdict(slot: Int32, device: Int32, fix: Fix) -> FilterVerdict {
        let bucket = flatSlots[Int(slot)].bucket
        let verdict = filterVerdicts[bucket]
        guard verdict != .notAdmitted, !devices.bucketFilters[bucket].isEmpty else { return verdict }
        if let override = devices.filterOverrides[device]?.first(where: { $0.slot == slot }) {
            return Self.judge(fix, reference: override.reference, filters: devices.bucketFilters[bucket], lead: fixLead)
        }
        if devices.acceptedFix(device: device, bucket: bucket).sequence <= flatSlots[Int(slot)].addedSequence {
            // New to the device: its first fix, which only its own lead can drop.
            return Self.judge(
                fix, reference: DeviceTable.AcceptedFix(), filters: devices.bucketFilters[bucket], lead: fixLead)
        }
        return verdict
    }

    /// Moves the filters' references after the fix: each filtered bucket's as its verdict says,
    /// each override's as its own does, and makes an override for each request new to the
    /// device (added since its bucket's reference) whose bucket did not take the fix, which it
    /// takes as its first. An override whose reference is its bucket's again goes.
    func settleFilters(_ fix: Fix, device: Int32, sequence: UInt64) {
        let accepted = DeviceTable.AcceptedFix(sequence: sequence, coordinate: fix.coordinate, time: fix.time)
        var overrides = devices.filterOverrides[device] ?? []
        let hadOverrides = !overrides.isEmpty
        // Overrides first, while their buckets' references are still the old ones.
        overrides.removeAll { !states[Int($0.slot)].isAlive || !requests[Int($0.slot)].applies(to: device) }
        for index in overrides.indices {
            let bucket = flatSlots[Int(overrides[index].slot)].bucket
            guard filterVerdicts[bucket] != .notAdmitted else { continue }
            let verdict = Self.judge(
                fix, reference: overrides[index].reference, filters: devices.bucketFilters[bucket], lead: fixLead)
            Self.move(&overrides[index].reference, by: verdict, to: accepted)
        }
        for bucket in filterVerdicts.indices where !devices.bucketFilters[bucket].isEmpty {
            let verdict = filterVerdicts[bucket]
            guard verdict != .notAdmitted else { continue }
            var reference = devices.acceptedFix(device: device, bucket: bucket)
            let firstTaken =
                Self.judge(
                    fix, reference: DeviceTable.AcceptedFix(), filters: devices.bucketFilters[bucket], lead: fixLead)
                == .accept
            if verdict != .accept && firstTaken {
                // Requests added since the reference was set take this fix as their first.
                let since = reference.sequence
                let slots = bucket < filteredSlots.count ? filteredSlots[bucket] : []
                var first = slots.count
                var low = 0
                while low < first {
                    let middle = (low + first) / 2
                    if flatSlots[Int(slots[middle])].addedSequence < since { low = middle + 1 } else { first = middle }
                }
                for slot in slots[first...]
                where requests[Int(slot)].applies(to: device) && !overrides.contains(where: { $0.slot == slot }) {
                    overrides.append(DeviceTable.FilterOverride(slot: slot, reference: accepted))
                }
            }
            Self.move(&reference, by: verdict, to: accepted)
            devices.setAcceptedFix(reference, device: device, bucket: bucket)
        }
        overrides.removeAll { override in
            override.reference == devices.acceptedFix(device: device, bucket: flatSlots[Int(override.slot)].bucket)
        }
        if !overrides.isEmpty || hadOverrides {
            devices.filterOverrides[device] = overrides.isEmpty ? nil : overrides
        }
    }

    private static func move(
        _ reference: inout DeviceTable.AcceptedFix, by verdict: FilterVerdict, to fix: DeviceTable.AcceptedFix
    ) {
        switch verdict {
        case .accept: reference = fix
        case .refresh: reference.time = fix.time
        case .drop, .notAdmitted: break
        }
    }

    /// Why the filters of the request in `slot` would not take `fix`, for `explain`; `nil` when
    /// they would. Reads the references only: call it before the fix is applied.
    func filterRefusal(slot: Int32, device: Int32, fix: Fix) -> String? {
        let bucket = flatSlots[Int(slot)].bucket
        let filters = devices.bucketFilters[bucket]
        guard !filters.isEmpty, (fix.accuracy ?? 0) <= devices.thresholds[bucket] else { return nil }
        var reference = devices.acceptedFix(device: device, bucket: bucket)
        if let override = devices.filterOverrides[device]?.first(where: { $0.slot == slot }) {
            reference = override.reference
        } else if reference.sequence <= flatSlots[Int(slot)].addedSequence {
            reference = DeviceTable.AcceptedFix()  // new to the device: only a lead can drop its first fix
        }
        return filterRefusal(filters: filters, reference: reference, fix: fix)
    }

    /// Why `filters` would not take `fix` against `reference`, for `explain`; `nil` when they would.
    func filterRefusal(filters: PositionFilters, reference: DeviceTable.AcceptedFix, fix: Fix) -> String? {
        switch Self.judge(fix, reference: reference, filters: filters, lead: fixLead) {
        case .accept, .notAdmitted:
            return nil
        case .refresh:
            let distance = reference.coordinate.distance(to: fix.coordinate)
            return "filtered (minDistance \(Self.metres(filters.minDistance ?? 0)) m): \(Self.metres(distance)) m "
                + "from the last accepted fix, whose time it refreshes"
        case .drop:
            if let limit = filters.maxFuture, let lead = fixLead, lead > limit {
                return "filtered (maxFuture \(Self.seconds(limit)) s): stamped \(Self.seconds(lead)) s ahead of the "
                    + (arrivalLead == nil ? "clock" : "largest time read before it")
            }
            let distance = reference.coordinate.distance(to: fix.coordinate)
            let seconds = Double(fix.time.microseconds - reference.time.microseconds) / 1_000_000
            let speed = seconds > 0 ? "\(Self.metres(distance / seconds)) m/s" : "a jump at the same time"
            return "filtered (maxSpeed \(Self.metres(filters.maxSpeed ?? 0)) m/s): \(speed) from the last accepted "
                + "fix (\(Self.metres(distance)) m in \(Self.metres(seconds)) s)"
        }
    }

    /// A span's seconds as a person writes them: `60`, `60.5`.
    static func seconds(_ span: TimeSpan) -> String {
        span.microseconds % 1_000_000 == 0 ? String(span.microseconds / 1_000_000) : String(span.seconds)
    }

    static func metres(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

extension Engine {
    /// Why a line stamped `time` is refused as too far ahead (the catalog's
    /// `defaults.filters.maxFuture`, SPEC §12): compared with the largest time read so far (the
    /// clock; with a reorder window, the largest time seen); `nil` when it is not, or when nothing
    /// was read yet. A driver asks before it applies the line, and reports a refused one as a bad
    /// line that moves nothing: the engine itself applies what it is given.
    /// With `wallClock` (a live feed under `--clock wall`), the lead is measured from it instead.
    public func futureRefusal(at time: Timestamp, wallClock: Timestamp? = nil) -> String? {
        guard let limit = defaultFilters.maxFuture else { return nil }
        if let wallClock { return Self.futureRefusal(at: time, latest: wallClock, limit: limit, of: "the wall clock") }
        let latest = configuration.reorderWindow > .zero ? (reorder.newestSeen ?? clock) : clock
        return Self.futureRefusal(at: time, latest: latest, limit: limit)
    }

    /// The refusal of a line stamped `time` when the largest time read before it (or the wall
    /// clock, as `reference` says) is `latest`.
    package static func futureRefusal(
        at time: Timestamp, latest: Timestamp?, limit: TimeSpan, of reference: String = "the latest time read"
    ) -> String? {
        guard let latest else { return nil }
        let lead = TimeSpan(microseconds: time.microseconds - latest.microseconds)
        guard lead > limit else { return nil }
        return "future time: \(seconds(lead)) s ahead of \(reference) (\(latest.rfc3339)), "
            + "over maxFuture \(seconds(limit)) s"
    }

    /// The line-level `maxFuture` of the catalog's defaults, if any.
    public var maximumLead: TimeSpan? { defaultFilters.maxFuture }
}

extension Catalog {
    /// Whether any request has position filters (or the defaults do).
    package var usesFilters: Bool { !defaultFilters.isEmpty || requests.contains { !$0.filters.isEmpty } }

    /// Whether a `maxFuture` is set, in the defaults or on a request (a line's lead is measured
    /// against the one clock of all devices), or a request pairs devices (proximity): engines
    /// that each hold some of the devices have neither, so a sharded run uses one engine.
    package var needsOneClock: Bool {
        defaultFilters.maxFuture != nil || requests.contains { $0.trigger.kind == .proximity }
            || requests.contains { request in
                guard let own = request.filters.maxFuture else { return false }
                return defaultFilters.maxFuture.map { own < $0 } ?? true
            }
    }
}
