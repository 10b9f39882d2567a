/// What the engine knows of one device: its last reading and where it stands for each request
/// (the service's `GET /v1/devices/{id}`).
public struct DeviceStatus: Hashable, Sendable {
    /// Where the device stands for one region or beacon request, or one proximity pair.
    public struct Standing: Hashable, Sendable {
        /// The request's identifier.
        public var requestID: String
        /// Whether the device is inside (after hysteresis, as its last event said).
        public var isInside: Bool
        /// While inside, when the stay began: its enter's `since`, notified or muted, or the first
        /// fix that placed the device inside without an enter.
        public var insideSince: Timestamp?
        /// When an open streak towards the other side began (its first fix or sighting), if one is open.
        public var changingSince: Timestamp?
        /// For a proximity request, the device this standing pairs it with (one standing per pair).
        public var other: String?
    }

    /// The device's name.
    public var device: String
    /// The time of its last applied reading.
    public var lastReadingTime: Timestamp?
    /// The position of its newest fix a request accepted.
    public var lastPosition: Coordinate?
    /// The requests where the device is inside or on its way to a change, in request order; it
    /// is outside every other request it is tracked for (listed too when asked for:
    /// ``Engine/status(ofDevice:includingOutside:)``).
    public var standings: [Standing]
}

extension Engine {
    /// How many devices the engine knows: those that reported and were not forgotten since.
    public var deviceCount: Int { devices.reportingCount }

    /// The names of the devices the engine knows (those ``status(ofDevice:includingOutside:)``
    /// describes), in the order it holds them: first read first, where a device forgotten and
    /// read again may keep its old place or take a new one at the end.
    public var deviceNames: [String] {
        devices.names.indices.compactMap { devices.isKnown($0) ? devices.names[$0] : nil }
    }

    /// What the engine knows of `device`, or `nil` for a device it has never read (or has
    /// forgotten since: `removeDevice`, `--device-ttl`).
    ///
    /// With `includingOutside`, every pending region and beacon request whose scope holds the
    /// device is listed, those it is outside of too (one standing each, in request order): the
    /// view of one device. Without, only where it is inside or changing, which a list of many
    /// devices over a large catalog can afford.
    public func status(ofDevice device: String, includingOutside: Bool = false) -> DeviceStatus? {
        guard let id = devices.id(of: device), devices.isKnown(Int(id)) else { return nil }
        let newest = devices.thresholds.indices.map { devices.acceptedFix(device: id, bucket: $0) }
            .max { $0.sequence < $1.sequence }
        var standings: [(slot: Int32, standing: DeviceStatus.Standing)] = []
        for record in devices.records[Int(id)] where canStillFire(requests[Int(record.slot)]) {
            guard record.machine.isInside || record.machine.pendingStreak != nil else { continue }
            let standing = DeviceStatus.Standing(
                requestID: requests[Int(record.slot)].request.id, isInside: record.machine.isInside,
                insideSince: record.machine.isInside && record.visit > 0 ? record.staySince : nil,
                changingSince: record.machine.pendingStreak?.since)
            standings.append((record.slot, standing))
        }
        for record in devices.beaconRecords[Int(id)] where canStillFire(requests[Int(record.slot)]) {
            guard !record.machine.isIdle else { continue }
            let standing = DeviceStatus.Standing(
                requestID: requests[Int(record.slot)].request.id, isInside: record.machine.isInside,
                insideSince: record.machine.isInside && record.visit > 0 ? record.staySince : nil,
                changingSince: record.machine.changingSince)
            standings.append((record.slot, standing))
        }
        for binding in proximity where Int(id) < binding.state.memberCount {
            let state = binding.state
            let partners = state.partners(of: id).sorted {
                DeviceNames.precedes(devices.names[Int($0)], devices.names[Int($1)])
            }
            for partner in partners {
                let (first, second) = orient(id, partner, state: state)
                guard let pair = state.pairs[ProximityState.pairKey(device: first, other: second)],
                    pair.inside || pair.candidateSince != nil
                else { continue }
                let standing = DeviceStatus.Standing(
                    requestID: requests[Int(binding.slot)].id, isInside: pair.inside,
                    insideSince: pair.inside && pair.visit > 0 ? pair.staySince : nil,
                    changingSince: pair.candidateSince, other: devices.names[Int(partner)])
                standings.append((binding.slot, standing))
            }
        }
        if includingOutside {
            let listed = Set(standings.map(\.slot))
            for (slot, entry) in requests.enumerated()
            where !listed.contains(Int32(slot)) && entry.applies(to: id) && canStillFire(entry) {
                switch entry.request.trigger {
                case .region, .beacon:
                    standings.append(
                        (Int32(slot), DeviceStatus.Standing(requestID: entry.request.id, isInside: false)))
                case .timeInterval, .calendar, .proximity: break
                }
            }
        }
        // Stable: a proximity request's pairs keep their name order.
        let ordered = standings.enumerated().sorted { ($0.element.slot, $0.offset) < ($1.element.slot, $1.offset) }
        return DeviceStatus(
            device: device, lastReadingTime: devices.fixStates[Int(id)].lastTime,
            lastPosition: newest.flatMap { $0.sequence > 0 ? $0.coordinate : nil },
            standings: ordered.map(\.element.standing))
    }
}
