/// The devices' part of a checkpoint: each device's last time, filter references, region and
/// beacon records, then the visit counts (SPEC §10, §12).
extension Engine {
    /// The devices dropped by renumbering that have visit counters and have not been read since,
    /// by name, each once, in byte order: a checkpoint lists them after the engine's devices, as
    /// devices with nothing but visit counters (which a renumbering after loading drops again).
    var forgottenDeviceNames: [String] {
        guard !forgottenVisits.isEmpty else { return [] }
        return Set(forgottenVisits.keys.lazy.map(\.device).filter { [devices] in devices.id(of: $0.name) == nil })
            .map(\.name).sorted { DeviceNames.precedes($0, $1) }
    }

    func writeCheckpointDevices(newSlot: [Int32], forgotten: [String], into writer: inout CheckpointWriter) {
        for device in 0..<devices.count {
            writer.write(devices.fixStates[device].lastTime) { $0.write($1) }
            for bucket in devices.thresholds.indices {
                let fix = devices.acceptedFix(device: Int32(device), bucket: bucket)
                writer.write(fix.sequence)
                writer.write(fix.coordinate)
                writer.write(fix.time)
            }
            let overrides = (devices.filterOverrides[Int32(device)] ?? []).filter { newSlot[Int($0.slot)] >= 0 }
            writer.write(each: overrides) { writer, override in
                writer.write(newSlot[Int(override.slot)])
                writer.write(override.reference.sequence)
                writer.write(override.reference.coordinate)
                writer.write(override.reference.time)
            }
            let regions = devices.records[device].filter { newSlot[Int($0.slot)] >= 0 }
            writer.write(each: regions) { writer, record in
                writer.write(newSlot[Int(record.slot)])
                record.machine.write(to: &writer)
                writer.write(record.insideAfterLastFix)
                writer.write(record.isDone)
                // A resumed engine has no settled disc: its records hold the fix the disc skipped.
                writer.write(devices.lastPosition(of: record, device: Int32(device)))
                writer.write(record.visit)
                writer.write(record.staySince)
            }
            let beacons = devices.beaconRecords[device].filter { newSlot[Int($0.slot)] >= 0 }
            writer.write(each: beacons) { writer, record in
                writer.write(newSlot[Int(record.slot)])
                record.machine.write(to: &writer)
                writer.write(record.isDone)
                writer.write(each: record.tracks) { writer, track in
                    writer.write(track.identity)
                    track.smoother.write(to: &writer)
                    writer.write(track.proximity) { $0.writeCase($1) }
                }
                writer.write(record.lastCounting) { $0.write($1) }
                writer.write(record.lastReport) { $0.write($1) }
                writer.write(record.visit)
                writer.write(record.staySince)
            }
        }
        for _ in forgotten {
            writer.write(nil as Timestamp?) { $0.write($1) }
            for _ in devices.thresholds.indices {
                writer.write(UInt64(0))
                writer.write(Coordinate(latitude: 0, longitude: 0))
                writer.write(Timestamp(microseconds: 0))
            }
            for _ in 0..<3 { writer.writeCount(0) }  // filter references, region and beacon records
        }
        var counters = visitCounters
        if !forgottenVisits.isEmpty {
            var listed: [DeviceName: Int32] = [:]
            for (index, name) in forgotten.enumerated() {
                listed[DeviceName(name: name)] = Int32(devices.count + index)
            }
            for (visit, count) in forgottenVisits {
                guard let device = devices.id(of: visit.device.name) ?? listed[visit.device] else { continue }
                counters[VisitKey.make(request: visit.request, device: device)] = count
            }
        }
        // Sorted, so that one state always writes the same bytes.
        writer.write(each: visitNames) { $0.write($1) }
        writer.write(each: counters.sorted { $0.key < $1.key }) { writer, counter in
            writer.write(counter.key)
            writer.write(counter.value)
        }
    }

    /// Reads what ``writeCheckpointDevices(newSlot:forgotten:into:)`` wrote, into the device table the head
    /// of the checkpoint made, with the requests installed. `clock` is the checkpoint's (the
    /// engine takes it only once everything is read).
    func restoreDevices(from reader: inout CheckpointReader, clock: Timestamp?) throws {
        let slots = Int32(requests.count)
        let deviceCount = Int32(devices.count)
        for device in 0..<devices.count {
            devices.fixStates[device].lastTime = try reader.optional { try $0.timestamp() }
            for bucket in devices.thresholds.indices {
                let fix = DeviceTable.AcceptedFix(
                    sequence: try reader.counter(), coordinate: try reader.coordinate(),
                    time: reader.version >= 3 ? try reader.timestamp() : Timestamp(microseconds: 0))
                devices.setAcceptedFix(fix, device: Int32(device), bucket: bucket)
            }
            if reader.version >= 3 {
                let overrides = try reader.array(typicalSize: 36) { reader in
                    let slot = try reader.int32()
                    guard slot >= 0, slot < slots, requests[Int(slot)].region != nil else {
                        throw reader.damaged("a filter reference names request slot \(slot)")
                    }
                    let fix = DeviceTable.AcceptedFix(
                        sequence: try reader.counter(), coordinate: try reader.coordinate(),
                        time: try reader.timestamp())
                    return DeviceTable.FilterOverride(slot: slot, reference: fix)
                }
                if !overrides.isEmpty { devices.filterOverrides[Int32(device)] = overrides }
            }
            let regionRecords = try reader.array(typicalSize: 26) { reader in
                let slot = try reader.int32()
                guard slot >= 0, slot < slots, requests[Int(slot)].region != nil else {
                    throw reader.damaged("a region record names request slot \(slot)")
                }
                let machine = try RegionStateMachine(from: &reader)
                var record = DeviceTable.RegionRecord(
                    slot: slot, machine: machine, insideAfterLastFix: try reader.bool(),
                    lastPosition: Position(coordinate: Coordinate(latitude: 0, longitude: 0)))
                record.isDone = try reader.bool()
                record.lastPosition = try reader.position()
                if reader.version >= 3 {
                    record.visit = try reader.int32()
                    record.staySince = try reader.timestamp()
                    guard record.visit >= 0, record.visit < Int32.max, (record.visit > 0) == machine.isInside,
                        record.staySince <= clock ?? record.staySince
                    else {
                        throw reader.damaged("a region record's visit does not match its standing")
                    }
                }
                return record
            }
            devices.replaceRecords(device: Int32(device), with: regionRecords)
            let regionSlots = regionRecords.map(\.slot)
            guard regionSlots.count < 2 || Set(regionSlots).count == regionSlots.count else {
                throw reader.damaged("device \(device) holds two records of one request")
            }
            devices.beaconRecords[device] = try reader.array(typicalSize: 12) { reader in
                let slot = try reader.int32()
                guard slot >= 0, slot < slots, requests[Int(slot)].beacon != nil else {
                    throw reader.damaged("a beacon record names request slot \(slot)")
                }
                var record = DeviceTable.BeaconRecord(slot: slot)
                record.machine = try BeaconStateMachine(from: &reader)
                record.isDone = try reader.bool()
                record.tracks = try reader.array(typicalSize: 20) { reader in
                    var track = DeviceTable.BeaconRecord.Track(identity: try reader.beaconIdentity())
                    track.smoother = try RSSISmoother(from: &reader)
                    track.proximity = try reader.optional { try $0.caseIndex(Proximity.self, "a proximity") }
                    return track
                }
                record.lastCounting = try reader.optional { try $0.beaconReport() }
                record.lastReport = try reader.optional { try $0.beaconReport() }
                if reader.version >= 3 {
                    record.visit = try reader.int32()
                    record.staySince = try reader.timestamp()
                    guard record.visit >= 0, record.visit < Int32.max, (record.visit > 0) == record.machine.isInside,
                        record.staySince <= clock ?? record.staySince
                    else {
                        throw reader.damaged("a beacon record's visit does not match its standing")
                    }
                }
                return record
            }
            let beaconSlots = devices.beaconRecords[device].map(\.slot)
            guard beaconSlots.count < 2 || Set(beaconSlots).count == beaconSlots.count else {
                throw reader.damaged("device \(device) holds two beacon records of one request")
            }
        }

        if reader.version >= 3 {
            // Ids are numbered afresh here (the requests installed above took numbers already).
            let names = try reader.array(typicalSize: 8) { try $0.string() }
            guard Set(names).count == names.count else {
                throw reader.damaged("a visit counter's request is listed twice")
            }
            let numbers = names.map { visitNumber(of: $0) }
            var previous: UInt64?
            let counters = try reader.array(typicalSize: 12) { reader in
                let key = try reader.uint64()
                // Written sorted, each once: anything else would load and write itself differently.
                guard previous.map({ $0 < key }) ?? true else {
                    throw reader.damaged("the visit counters are out of order")
                }
                previous = key
                let count = try reader.int32()
                let device = VisitKey.device(of: key)
                let request = Int(VisitKey.request(of: key))
                guard device >= 0, device < deviceCount, request < numbers.count, count > 0, count < Int32.max else {
                    throw reader.damaged("a visit counter names device \(device) and request \(request)")
                }
                return (VisitKey.make(request: numbers[request], device: device), count)
            }
            visitCounters = Dictionary(counters, uniquingKeysWith: { _, last in last })
        } else {
            // Stays open in an older checkpoint are numbered now, from its clock.
            for device in 0..<devices.count {
                for index in devices.records[device].indices where devices.records[device][index].machine.isInside {
                    let slot = devices.records[device][index].slot
                    devices.records[device][index].visit = nextVisit(
                        request: requests[Int(slot)].id, device: Int32(device))
                    devices.records[device][index].staySince = clock ?? Timestamp(microseconds: 0)
                }
                for index in devices.beaconRecords[device].indices
                where devices.beaconRecords[device][index].machine.isInside {
                    let slot = devices.beaconRecords[device][index].slot
                    devices.beaconRecords[device][index].visit = nextVisit(
                        request: requests[Int(slot)].id, device: Int32(device))
                    devices.beaconRecords[device][index].staySince = clock ?? Timestamp(microseconds: 0)
                }
            }
        }
    }
}
