extension Engine {
    /// The cross-enabled requests whose fence the path from the device's previous accepted fix to
    /// `fix` passes through while both fixes are outside (SPEC §5, "Cross"). Checked before the
    /// fix updates any state, because the state after the previous fix is what counts.
    /// With `careful` (see ``judgeFilters(_:device:accuracy:)``), a request whose filters do not
    /// take the fix is skipped, and a request with a reference of its own starts its path there.
    func pendingCrosses(_ fix: Fix, device: Int32, accuracy: Double, careful: Bool) -> [(slot: Int32, distance: Double)]
    {
        var found: [(slot: Int32, distance: Double)] = []
        var nearby: [Int32] = []
        var starts: [(bucket: Int, previous: DeviceTable.AcceptedFix, only: Int32?)] = []
        for bucket in devices.thresholds.indices where accuracy <= devices.thresholds[bucket] {
            starts.append((bucket, devices.acceptedFix(device: device, bucket: bucket), nil))
        }
        if careful, let overrides = devices.filterOverrides[device] {
            for override in overrides where accuracy <= devices.thresholds[flatSlots[Int(override.slot)].bucket] {
                starts.append((flatSlots[Int(override.slot)].bucket, override.reference, override.slot))
            }
        }
        for (bucket, previous, only) in starts {
            guard previous.sequence > 0 else { continue }
            let start = previous.coordinate
            let end = fix.coordinate
            var box = GeoBounds(around: [
                start, Coordinate(latitude: end.latitude, longitude: unwrap(end.longitude, near: start.longitude)),
            ])
            if start.distance(to: end) > 1000 {
                box = GeoBounds(around: GreatCircle.densified(from: start, to: end, spacing: 1000))
            }
            nearby.removeAll(keepingCapacity: true)
            crossIndex.query(bounds: box.expanded(byMetres: 50), into: &nearby)
            var seen: Set<Int32> = []
            for slot in nearby where seen.insert(slot).inserted {
                let entry = requests[Int(slot)]
                guard states[Int(slot)].isAlive, let region = entry.region, region.bucket == bucket,
                    entry.applies(to: device),
                    previous.sequence > entry.addedSequence
                else { continue }
                if careful {
                    // A request with a reference of its own is measured from it alone.
                    let own = devices.filterOverrides[device]?.contains { $0.slot == slot } ?? false
                    guard own ? only == slot : only == nil,
                        filterVerdict(slot: slot, device: device, fix: fix) == .accept
                    else {
                        continue
                    }
                }
                if let index = devices.recordIndex(device: device, slot: slot) {
                    let record = devices.records[Int(device)][index]
                    if record.isDone || record.insideAfterLastFix { continue }
                }
                let fence = region.fence
                let distance = fence.signedDistance(to: end)
                guard distance > 0, fence.signedDistance(to: start) > 0,
                    fence.isCrossed(from: start, to: end, path: region.crossing)
                else { continue }
                found.append((slot, distance))
            }
        }
        return found
    }

    /// Emits the cross if the device is still outside after the fix.
    func confirmCross(slot: Int32, distance: Double, device: Int32, fix: Fix) {
        let entry = requests[Int(slot)]
        guard states[Int(slot)].isAlive, let region = entry.region else { return }
        let position = Position(coordinate: fix.coordinate, accuracy: fix.accuracy)
        if let index = devices.recordIndex(device: device, slot: slot) {
            let record = devices.records[Int(device)][index]
            if record.isDone || record.machine.isInside { return }
        }
        let event = makeEvent(
            .cross, for: entry, device: devices.names[Int(device)], time: fix.time, position: position,
            distance: distance, reason: .observed)
        guard deliver(event, for: entry, device: device) else { return }
        guard !region.repeats else { return }
        states[Int(slot)].finishedDevices += 1
        devices.unsettle(device: device)
        if let index = devices.recordIndex(device: device, slot: slot) {
            devices.records[Int(device)][index].isDone = true
        } else {
            var record = DeviceTable.RegionRecord(
                slot: slot, machine: RegionStateMachine(), insideAfterLastFix: false, lastPosition: position)
            record.isDone = true
            devices.appendRecord(record, device: device)
        }
    }
}
