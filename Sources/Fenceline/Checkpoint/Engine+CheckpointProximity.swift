/// The proximity requests' part of a checkpoint (format 4): each one's devices' last fixes and its
/// pairs that are not idle (used-up ones as a bare `isDone`). The grid is rebuilt from the fixes; the order devices sit in a cell
/// changes no event (a fix evaluates its pairs in name order).
extension Engine {
    func writeCheckpointProximity(newSlot: [Int32], into writer: inout CheckpointWriter) {
        let live = proximity.filter { newSlot[Int($0.slot)] >= 0 }
        writer.write(each: live) { writer, binding in
            let state = binding.state
            writer.write(newSlot[Int(binding.slot)])
            let members = state.members
            writer.write(each: members.indices.filter { members[$0].hasFix }) { writer, device in
                let member = members[device]
                writer.write(Int32(device))
                writer.write(member.coordinate)
                writer.write(member.time)
            }
            var used = ProximityState.Pair()
            used.isDone = true
            let pairs = Array(state.pairs) + state.done.map { (key: $0, value: used) }
            writer.write(each: pairs.sorted { $0.key < $1.key }) { writer, item in
                let (device, other) = ProximityState.devices(of: item.key)
                let pair = item.value
                writer.write(device)
                writer.write(other)
                writer.write(pair.inside)
                writer.write(pair.candidateSince) { $0.write($1) }
                writer.write(pair.token)
                writer.write(pair.ageToken)
                writer.write(pair.visit)
                writer.write(pair.staySince)
                writer.write(pair.isDone)
                writer.write(pair.distance)
            }
        }
    }

    /// Reads what ``writeCheckpointProximity(newSlot:into:)`` wrote into the states the installed
    /// requests made, checking that each device and pair is one the engine could have made.
    func restoreProximity(from reader: inout CheckpointReader) throws {
        let deviceCount = Int32(devices.count)
        let count = try reader.count()
        guard count == proximity.count else {
            throw reader.damaged("\(count) proximity states for \(proximity.count) proximity requests")
        }
        for binding in proximity {
            guard try reader.int32() == binding.slot else { throw reader.damaged("a proximity state's slot is wrong") }
            let state = binding.state
            var previous: Int32 = -1
            let members = try reader.count()
            for _ in 0..<members {
                let device = try reader.int32()
                guard device > previous, device < deviceCount else {
                    throw reader.damaged("a proximity state lists device \(device) out of order")
                }
                previous = device
                let coordinate = try reader.coordinate()
                let time = try reader.timestamp()
                state.ensure(device)
                guard proximityRole(of: device, slot: binding.slot, state: state).pairs else {
                    throw reader.damaged("device \(device) cannot be in proximity request slot \(binding.slot)")
                }
                state.move(device, to: coordinate, time: time)
            }
            let pairs = try reader.count()
            var last: UInt64?
            for _ in 0..<pairs {
                let device = try reader.int32()
                let other = try reader.int32()
                guard device >= 0, device < deviceCount, other >= 0, other < deviceCount, device != other,
                    Int(max(device, other)) < state.memberCount, state[device].hasFix,
                    state[other].hasFix, orient(device, other, state: state) == (device, other)
                else {
                    throw reader.damaged("a proximity pair names devices \(device) and \(other)")
                }
                let key = ProximityState.pairKey(device: device, other: other)
                guard last.map({ $0 < key }) ?? true else { throw reader.damaged("proximity pairs are out of order") }
                last = key
                var pair = ProximityState.Pair()
                pair.inside = try reader.bool()
                pair.candidateSince = try reader.optional { try $0.timestamp() }
                pair.token = try reader.uint64()
                pair.ageToken = try reader.uint64()
                pair.visit = try reader.int32()
                pair.staySince = try reader.timestamp()
                pair.isDone = try reader.bool()
                pair.distance = try reader.double()
                guard !pair.isIdle, pair.visit >= 0 else { throw reader.damaged("a proximity pair holds nothing") }
                // A used-up pair is written bare: anything more was not written by an engine (and
                // would not be written again).
                var bare = ProximityState.Pair()
                bare.isDone = true
                guard !pair.isDone || pair == bare else {
                    throw reader.damaged("a used-up proximity pair holds a state")
                }
                state.store(pair, device: device, other: other)
            }
        }
    }
}
