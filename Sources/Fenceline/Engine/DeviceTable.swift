import Foundation

/// Devices interned to dense integers, with their flat per-device state.
///
/// Region state is sparse: a device holds a record only for requests where it is inside, has a
/// streak or timer pending, or has used up a non-repeating request. Everything else is "outside",
/// so memory grows with devices and the fences they are in, never with devices × fences.
struct DeviceTable {
    /// The state the engine keeps for one (region request, device) pair.
    struct RegionRecord {
        let slot: Int32
        var machine: RegionStateMachine
        /// Whether the device was inside right after its last accepted fix (for `cross`).
        var insideAfterLastFix: Bool
        /// A non-repeating request already notified this device.
        var isDone = false
        /// The last accepted fix, reported by timer-fired events (its distance is measured then).
        var lastPosition: Position
        /// The stay going on (SPEC §12 visits): its number, 0 while outside, and when it began
        /// (its enter's `since`, or the first fix of a stay begun silently).
        var visit: Int32 = 0
        var staySince = Timestamp(microseconds: 0)
        /// A certificate from the last measurement of the fence (a circle or polygon in `ignore`
        /// mode): every fix `safe` holds is on the same side of the threshold the machine watches
        /// while `isInside == safeInside` (exit while inside, enter while outside) as the measured
        /// fix, whose condition is `safeCondition` (the signed distance changes no faster than the
        /// position). It holds within the request epoch `safe.epoch`, for fixes with an accuracy of
        /// at most `safeAccuracy` (the request's threshold). Radius 0: none.
        var safe = SafeDisc()
        var safeCondition = RegionStateMachine.Condition.band
        var safeInside = false
        var safeAccuracy = 0.0
        /// The request's exit delay and minimum fixes, for counting an exit streak's fixes in
        /// ``stepSettled(_:at:accuracy:epoch:)``.
        var safeExitDelay = TimeSpan.zero
        var safeMinFixes = 1

        /// Whether the record says nothing beyond "outside".
        var isIdle: Bool { machine.isIdle && !insideAfterLastFix && !isDone }

        /// Whether the certificate covers `point` on the machine's current side, in request `epoch`.
        @inline(__always)
        func certificateHolds(_ point: Coordinate, epoch: UInt64) -> Bool {
            safe.radius > 0 && safeInside == machine.isInside && safe.epoch == epoch && safe.holds(point)
        }

        /// Steps the record for a fix its certificate settles with nothing to emit or schedule: the
        /// device is inside, the fix lies in the certificate (measured in `epoch`), and it either
        /// does not meet the exit condition or extends an open exit streak without confirming it.
        /// Such a step needs nothing of the request, so the caller reads none of it.
        /// - Returns: `false`, changing nothing, when the certificate does not settle the fix.
        @inline(__always)
        mutating func stepSettled(_ position: Position, at time: Timestamp, accuracy: Double, epoch: UInt64) -> Bool {
            guard machine.isInside, !isDone, accuracy <= safeAccuracy,
                certificateHolds(position.coordinate, epoch: epoch)
            else { return false }
            if safeCondition != .exit {
                machine.cancelStreak()
            } else if !machine.extendStreak(at: time, delay: safeExitDelay, minFixes: safeMinFixes) {
                return false
            }
            lastPosition = position
            insideAfterLastFix = true
            return true
        }
    }

    /// The state the engine keeps for one (beacon request, device) pair, with the smoothing of each
    /// concrete beacon of the region the device has heard.
    struct BeaconRecord {
        struct Track {
            let identity: BeaconIdentity
            var smoother = RSSISmoother()
            var proximity: Proximity?
        }

        let slot: Int32
        var machine = BeaconStateMachine()
        var isDone = false
        /// The stay going on, as a region record's.
        var visit: Int32 = 0
        var staySince = Timestamp(microseconds: 0)
        var tracks: [Track] = []
        /// The last sighting that counted, named by timeout exits and delayed enters.
        var lastCounting: BeaconReport?
        /// The last sighting of the region, named by proximity exits.
        var lastReport: BeaconReport?

        /// Forgets the tracks whose samples have all left the smoothing window by `time`. While the
        /// device is inside, such a track restarts its average but keeps its proximity class, so
        /// the band still applies to its next sample (SPEC §6); outside, it goes whole.
        mutating func expireTracks(at time: Timestamp, filter: RSSIFilter, window: TimeSpan) {
            if machine.isInside {
                for index in tracks.indices
                where tracks[index].smoother.isExpired(at: time, filter: filter, window: window) {
                    tracks[index].smoother.restart()
                }
            } else {
                tracks.removeAll { $0.smoother.isExpired(at: time, filter: filter, window: window) }
            }
        }
    }

    /// A disc around a device's last full evaluation within which no region request the device
    /// holds no record for can meet its enter condition, nor any other fence box begin: a fix
    /// inside it needs neither the index nor those requests (see `Engine.apply(_:device:)`). Also
    /// the disc of a record's certificate.
    struct SafeDisc {
        var center = Coordinate(latitude: 0, longitude: 0)
        /// Metres; 0 when there is none.
        var radius = 0.0
        /// The engine's request epoch it was measured in: any region request added or removed since
        /// voids it.
        var epoch: UInt64 = 0
        /// Metres per degree of longitude at the centre.
        var metresPerLongitude = 0.0

        init() {}

        init(center: Coordinate, radius: Double, epoch: UInt64) {
            self.center = center
            self.radius = radius
            self.epoch = epoch
            metresPerLongitude = Earth.metresPerDegree * cos(center.latitude * .pi / 180)
        }

        /// The radius of a disc around `point` (in its own projection) that lies within this one,
        /// for a point within a kilometre and away from the poles (as every disc is): what
        /// ``holds(_:)`` pads, and 0.3 % for the two projections' difference; 0 when `point` is
        /// not inside.
        @inline(__always)
        func radiusWithin(around point: Coordinate) -> Double {
            let room = (radius - 0.01) / 1.001 - projectedDistance(to: point)
            return max(0, room * 0.997 - 0.05)
        }

        /// Whether `point` is certainly inside: a local projection, padded (0.1 % and 1 cm) for the
        /// projection's error within the kilometre a disc spans at most.
        @inline(__always)
        func holds(_ point: Coordinate) -> Bool {
            projectedDistance(to: point) * 1.001 + 0.01 < radius
        }

        /// Metres from the centre to `point` in the centre's local projection.
        @inline(__always)
        private func projectedDistance(to point: Coordinate) -> Double {
            let dy = (point.latitude - center.latitude) * Earth.metresPerDegree
            let dx = (unwrap(point.longitude, near: center.longitude) - center.longitude) * metresPerLongitude
            return (dx * dx + dy * dy).squareRoot()
        }
    }

    /// The last fix of a device that the requests of a bucket (an accuracy threshold and position
    /// filters) accepted: their filters' reference.
    struct AcceptedFix: Equatable {
        /// The engine's apply counter for that fix; 0 when there was none.
        var sequence: UInt64 = 0
        var coordinate = Coordinate(latitude: 0, longitude: 0)
        /// Its time, or that of a later fix too close to it to move it (`minDistance`).
        var time = Timestamp(microseconds: 0)
    }

    /// A request whose filters' reference for a device is not its bucket's: one added after the
    /// bucket's reference was set, whose first fix the bucket dropped (or only refreshed by). It
    /// goes once the two references are the same fix again (see `Engine.settleFilters`).
    struct FilterOverride {
        let slot: Int32
        var reference: AcceptedFix
    }

    /// The devices with overrides, and theirs: almost always none.
    var filterOverrides: [Int32: [FilterOverride]] = [:]

    private(set) var names: [String] = []
    /// A slot of `table`: a device's id (-1 empty) and its name, kept here too so that a lookup
    /// compares the name in the slot it reads anyway (reading it from `names` was a second likely
    /// cache miss per reading), and the high half of the name's hash, which a lookup compares
    /// first: names of one length passed on a probe were otherwise compared byte by byte.
    private struct Slot {
        var id: Int32 = -1
        var tag: UInt32 = 0
        var name = ""

        init() {}

        init(id: Int32, name: String, hash: Int) {
            self.id = id
            tag = Slot.tag(of: hash)
            self.name = name
        }

        @inline(__always)
        static func tag(of hash: Int) -> UInt32 { UInt32(truncatingIfNeeded: hash >> 32) }
    }

    /// Open addressing from a device name's hash to its id. Written by hand rather than a
    /// `Dictionary` because every reading interns its device and SipHash showed in profiles; the
    /// names are our own input, so a fast multiplicative hash of their bytes serves (collisions
    /// only cost probes).
    private var table = [Slot](repeating: Slot(), count: 64)

    @inline(__always)
    private func find(_ name: String, hash: Int) -> (id: Int32?, position: Int) {
        find(hash: hash) { DeviceNames.areSame($0, name) }
    }

    /// The id of the name with `hash` that `isName` accepts, or the empty slot where it would go.
    @inline(__always)
    private func find(hash: Int, isName: (String) -> Bool) -> (id: Int32?, position: Int) {
        let mask = table.count - 1
        var position = hash & mask
        let tag = Slot.tag(of: hash)
        while true {
            let id = table[position].id
            if id < 0 { return (nil, position) }
            if table[position].tag == tag && isName(table[position].name) { return (id, position) }
            position = (position + 1) & mask
        }
    }

    /// What every fix reads of its device before anything else, together in one value (about a
    /// cache line): kept in separate arrays, each was a likely cache miss of its own.
    struct FixState {
        /// The time of the device's last applied reading (stale detection).
        var lastTime: Timestamp?
        /// The device's safe disc.
        var disc = SafeDisc()
        /// A disc within which a fix would step every region record of the device as a settled
        /// no-op (``RegionRecord/stepSettled(_:at:accuracy:epoch:)`` with no streak to count and
        /// no dwell awaited), for fixes of accuracy at most `settledAccuracy`: such a fix reads
        /// none of the records. It lies within every record's certificate; radius 0: none. Any
        /// change to the device's records but a settled step voids it (``unsettle(device:)``).
        /// A record so skipped keeps its `lastPosition` from before; ``skippedFix`` holds the fix
        /// it would have taken.
        var settled = SafeDisc()
        var settledAccuracy = 0.0
        /// The device's last fix when the settled disc let it skip every region record (each
        /// would have taken it): the records' true last position, which a forced exit (removeDevice,
        /// expiry, time to live) reports and a checkpoint writes for them, so that neither depends
        /// on whether a disc was at hand (a resumed engine has none). The next fix that is not
        /// settled writes it into the records (``takeSkippedFix(device:)``) before any is stepped,
        /// since it may not step them all (a record over its `maxAccuracy`, a filtered one).
        var skippedFix: Position?

        /// Whether the settled disc covers a fix at `point` with `accuracy`, in request `epoch`.
        @inline(__always)
        func isSettled(_ point: Coordinate, accuracy: Double, epoch: UInt64) -> Bool {
            settled.radius > 0 && settled.epoch == epoch && accuracy <= settledAccuracy && settled.holds(point)
        }
    }

    var fixStates: [FixState] = []
    /// Each device's region records. Whatever changes them, other than a settled step, calls
    /// ``unsettle(device:)``.
    var records: [[RegionRecord]] = []
    /// The index of each record of a device with many (see ``mappedRecords``), by (device, slot).
    private var recordPositions: [Int64: Int] = [:]
    private var mappedDevices: Set<Int32> = []

    /// Voids the device's settled disc (see ``FixState/settled``).
    @inline(__always)
    mutating func unsettle(device: Int32) {
        fixStates[Int(device)].settled.radius = 0
    }

    /// The last fix `record` of `device` took: the one a settled disc let it skip, if any (see
    /// ``FixState/skippedFix``), else its own.
    @inline(__always)
    func lastPosition(of record: RegionRecord, device: Int32) -> Position {
        fixStates[Int(device)].skippedFix ?? record.lastPosition
    }

    /// Writes the fix a settled disc let the device's records skip into each of them (see
    /// ``FixState/skippedFix``) and forgets it.
    mutating func takeSkippedFix(device: Int32) {
        guard let fix = fixStates[Int(device)].skippedFix else { return }
        fixStates[Int(device)].skippedFix = nil
        records[Int(device)].withUnsafeMutableBufferPointer { records in
            for index in records.indices { records[index].lastPosition = fix }
        }
    }
    var beaconRecords: [[BeaconRecord]] = []
    /// `accepted[device * thresholds.count + bucket]`.
    private(set) var accepted: [AcceptedFix] = []
    /// The distinct `maxAccuracy` values of region requests (`.infinity` for none), each a bucket
    /// with the position filters of `bucketFilters` (the same index).
    private(set) var thresholds: [Double] = [.infinity]
    private(set) var bucketFilters: [PositionFilters] = [PositionFilters()]
    /// How many buckets have filters: with none, a fix is judged by accuracy alone.
    private(set) var filteredBuckets = 0

    var count: Int { names.count }

    /// The most slots any name's lookup passes before finding it (tests check the hash spreads).
    var longestProbe: Int {
        let mask = table.count - 1
        var longest = 0
        for (position, slot) in table.enumerated() where slot.id >= 0 {
            longest = max(longest, (position - DeviceHash.of(slot.name)) & mask)
        }
        return longest
    }

    /// The dense id of `name`, adding the device when new.
    @inline(__always)
    mutating func intern(_ name: String) -> Int32 {
        let hash = DeviceHash.of(name)
        let (found, position) = find(name, hash: hash)
        if let found { return found }
        let id = Int32(names.count)
        table[position] = Slot(id: id, name: name, hash: hash)
        names.append(name)
        if names.count * 2 > table.count {
            rehash(size: table.count * 2)  // grow at half full, so probes stay short
        }
        fixStates.append(FixState())
        records.append([])
        beaconRecords.append([])
        accepted.append(contentsOf: repeatElement(AcceptedFix(), count: thresholds.count))
        return id
    }

    /// The dense id of the device named by the UTF-8 bytes `name`, adding the device when new:
    /// ``intern(_:)`` without making a `String` of a name already seen.
    @inline(__always)
    mutating func intern(bytes name: UnsafeBufferPointer<UInt8>) -> Int32 {
        if let id = find(hash: DeviceHash.of(bytes: name), isName: { DeviceNames.areSame($0, bytes: name) }).id {
            return id
        }
        return intern(String(decoding: name, as: UTF8.self))
    }

    /// The dense id of `name` if the device has been seen.
    func id(of name: String) -> Int32? { find(name, hash: DeviceHash.of(name)).id }

    /// The bucket of `maxAccuracy` and `filters`, adding it when new.
    mutating func bucket(maxAccuracy: Double, filters: PositionFilters = PositionFilters()) -> Int {
        if let existing = thresholds.indices.first(where: {
            thresholds[$0] == maxAccuracy && bucketFilters[$0] == filters
        }) {
            return existing
        }
        let old = thresholds.count
        thresholds.append(maxAccuracy)
        bucketFilters.append(filters)
        if !filters.isEmpty { filteredBuckets += 1 }
        var widened: [AcceptedFix] = []
        widened.reserveCapacity(names.count * thresholds.count)
        for device in 0..<names.count {
            widened.append(contentsOf: accepted[(device * old)..<(device * old + old)])
            widened.append(AcceptedFix())
        }
        accepted = widened
        return old
    }

    @inline(__always)
    func acceptedFix(device: Int32, bucket: Int) -> AcceptedFix {
        accepted[Int(device) * thresholds.count + bucket]
    }

    /// Whether the device has had a fix accepted in `bucket` since apply sequence `sequence` (a
    /// request's addition), or by the request in `slot` itself (a filter reference of its own):
    /// then it is known to be outside a request it holds no record for.
    @inline(__always)
    func hasAcceptedFix(device: Int32, bucket: Int, after sequence: UInt64, slot: Int32) -> Bool {
        if acceptedFix(device: device, bucket: bucket).sequence > sequence { return true }
        return !filterOverrides.isEmpty && filterOverrides[device]?.contains { $0.slot == slot } == true
    }

    /// Records the fix as the last accepted one in every bucket whose threshold admits `accuracy`
    /// (buckets without filters; see `Engine.settleFilters` for the others).
    @inline(__always)
    mutating func accept(
        device: Int32, coordinate: Coordinate, time: Timestamp, accuracy: Double, sequence: UInt64,
        skippingFiltered: Bool
    ) {
        let base = Int(device) * thresholds.count
        for bucket in thresholds.indices where accuracy <= thresholds[bucket] {
            if skippingFiltered && !bucketFilters[bucket].isEmpty { continue }
            accepted[base + bucket] = AcceptedFix(sequence: sequence, coordinate: coordinate, time: time)
        }
    }

    /// Sets a device's last accepted fix in one bucket (a filtered bucket's, as its verdict says;
    /// a checkpoint's).
    @inline(__always)
    mutating func setAcceptedFix(_ fix: AcceptedFix, device: Int32, bucket: Int) {
        accepted[Int(device) * thresholds.count + bucket] = fix
    }

    /// Frees a device's state (SPEC §12 forgetting): its records and their storage, its
    /// standing, discs and filter references; its name stays interned (its id, and the visit
    /// counts kept by it, stay valid).
    mutating func forget(device: Int32) {
        if fixStates[Int(device)].lastTime != nil { reportingCount -= 1 }
        forgottenSinceRenumbering += 1
        replaceRecords(device: device, with: [])
        beaconRecords[Int(device)] = []
        fixStates[Int(device)] = FixState()
        let base = Int(device) * thresholds.count
        for bucket in thresholds.indices { accepted[base + bucket] = AcceptedFix() }
        filterOverrides[device] = nil
    }

    /// Devices with a last reading: those that reported and were not forgotten since.
    var reportingCount = 0

    /// Sets the device's last reading time; whether it had none (a first reading, or the first
    /// since it was forgotten).
    @inline(__always)
    mutating func recordReading(device: Int32, at time: Timestamp) -> Bool {
        let first = fixStates[Int(device)].lastTime == nil
        if first { reportingCount += 1 }
        fixStates[Int(device)].lastTime = time
        return first
    }

    /// Whether the table holds anything of the device: a last reading or records (what
    /// `Engine.status(ofDevice:includingOutside:)` describes).
    func isKnown(_ device: Int) -> Bool {
        fixStates[device].lastTime != nil || !records[device].isEmpty || !beaconRecords[device].isEmpty
    }
    /// Devices forgotten since the table was last renumbered: when they are many, the engine
    /// renumbers the devices it still knows (``renumber(keeping:)``), which frees the rest.
    var forgottenSinceRenumbering = 0

    /// Renumbers the devices `keep` holds for densely, in their order (so every order that
    /// follows device numbers stays the same), and drops the others with their names: a name
    /// seen again later is a new device. Every array is rebuilt to the size it needs, so the
    /// memory of a forgotten fleet goes back to the allocator.
    /// - Returns: each old number's new one, -1 for a dropped device.
    mutating func renumber(keeping keep: [Bool]) -> [Int32] {
        var newID = [Int32](repeating: -1, count: names.count)
        var kept: [Int] = []
        for device in names.indices where keep[device] {
            newID[device] = Int32(kept.count)
            kept.append(device)
        }
        func rebuilt<Element>(_ array: [Element]) -> [Element] {
            var result: [Element] = []
            result.reserveCapacity(kept.count)
            for device in kept { result.append(array[device]) }
            return result
        }
        names = rebuilt(names)
        fixStates = rebuilt(fixStates)
        records = rebuilt(records)
        beaconRecords = rebuilt(beaconRecords)
        var keptAccepted: [AcceptedFix] = []
        keptAccepted.reserveCapacity(kept.count * thresholds.count)
        for device in kept {
            keptAccepted.append(contentsOf: accepted[(device * thresholds.count)..<((device + 1) * thresholds.count)])
        }
        accepted = keptAccepted
        filterOverrides = Dictionary(
            uniqueKeysWithValues: filterOverrides.compactMap { device, list in
                newID[Int(device)] >= 0 ? (newID[Int(device)], list) : nil
            })
        mappedDevices = Set(mappedDevices.compactMap { newID[Int($0)] >= 0 ? newID[Int($0)] : nil })
        recordPositions = Dictionary(
            uniqueKeysWithValues: recordPositions.compactMap { key, index in
                let device = newID[Int(key >> 32)]
                return device >= 0 ? (Self.key(device, Int32(truncatingIfNeeded: key)), index) : nil
            })
        var size = 64
        while size < names.count * 2 { size *= 2 }
        rehash(size: size)
        forgottenSinceRenumbering = 0
        return newID
    }

    /// Makes room for `count` devices in all, so interning that many grows nothing.
    mutating func reserve(_ count: Int) {
        var size = table.count
        while size < count * 2 { size *= 2 }
        if size > table.count { rehash(size: size) }
        names.reserveCapacity(count)
        fixStates.reserveCapacity(count)
        records.reserveCapacity(count)
        beaconRecords.reserveCapacity(count)
        accepted.reserveCapacity(count * thresholds.count)
    }

    /// Rebuilds the lookup table with `size` slots (a power of two).
    private mutating func rehash(size: Int) {
        table = [Slot](repeating: Slot(), count: size)
        let mask = size - 1
        for (index, name) in names.enumerated() {
            let hash = DeviceHash.of(name)
            var slot = hash & mask
            while table[slot].id >= 0 { slot = (slot + 1) & mask }
            table[slot] = Slot(id: Int32(index), name: name, hash: hash)
        }
    }

    /// Where the record of (`device`, `slot`) sits in the device's records, if it has one.
    @inline(__always)
    mutating func recordIndex(device: Int32, slot: Int32) -> Int? {
        guard records[Int(device)].count > Self.mappedRecords else {
            return records[Int(device)].firstIndex { $0.slot == slot }
        }
        if !mappedDevices.contains(device) {
            mappedDevices.insert(device)
            for (index, record) in records[Int(device)].enumerated() {
                recordPositions[Self.key(device, record.slot)] = index
            }
        }
        return recordPositions[Self.key(device, slot)]
    }

    /// Adds a record (of a request the device has none for) at the end of its records.
    mutating func appendRecord(_ record: RegionRecord, device: Int32) {
        records[Int(device)].append(record)
        if mappedDevices.contains(device) {
            recordPositions[Self.key(device, record.slot)] = records[Int(device)].count - 1
        }
    }

    /// Removes the record at `index`: in place while the device has few, else by moving its last
    /// record into the gap. The order of a device's records can then differ between a run and
    /// one resumed from its checkpoint (which drops retired requests' records at once): nothing
    /// depends on it, since a device has one record per request and events are released sorted.
    mutating func removeRecord(at index: Int, device: Int32) {
        let count = records[Int(device)].count
        guard count > Self.mappedRecords else {
            records[Int(device)].remove(at: index)
            return
        }
        let last = count - 1
        let removed = records[Int(device)][index].slot
        if index != last { records[Int(device)].swapAt(index, last) }
        records[Int(device)].removeLast()
        guard mappedDevices.contains(device) else { return }
        recordPositions[Self.key(device, removed)] = nil
        if last <= Self.mappedRecords {
            unmap(device: device)
        } else if index != last {
            recordPositions[Self.key(device, records[Int(device)][index].slot)] = index
        }
    }

    /// Sets a device's records, as a checkpoint holds them.
    mutating func replaceRecords(device: Int32, with list: [RegionRecord]) {
        unmap(device: device)
        records[Int(device)] = list
    }

    /// A device with more records than this has them found through ``recordPositions``: one fix
    /// inside thousands of overlapping fences would otherwise scan its records once per fence.
    static let mappedRecords = 32

    private mutating func unmap(device: Int32) {
        guard mappedDevices.remove(device) != nil else { return }
        for record in records[Int(device)] { recordPositions[Self.key(device, record.slot)] = nil }
    }

    @inline(__always)
    private static func key(_ device: Int32, _ slot: Int32) -> Int64 {
        Int64(device) << 32 | Int64(UInt32(bitPattern: slot))
    }
}
