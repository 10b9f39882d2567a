/// The delivered notifications (SPEC §8): every firing adds an entry; re-adding a request moves its
/// entries to the top with the new content; at most `limit` entries per device, oldest dropped.
///
/// One log in delivery order rather than a list per device: a notification is an append, where a
/// list per device cost a hash of the device name, a dictionary probe and a write to that
/// device's cold list; the log is compacted in place, so it reuses the pages it grew into rather
/// than faulting in fresh ones. A device's entries beyond its newest `limit` are dropped when the log is
/// compacted: when it has doubled since the last compaction (so each entry pays for its share of
/// one pass) and before it is rewritten (`replace`, `remove`); a read (`events`) compacts a copy,
/// so reading the list costs a pass over the log, which holds at most about twice the entries the
/// limit keeps.
struct DeliveredLedger {
    let limit: Int
    /// Every entry kept, oldest first (the order is the delivery order, re-adds moved to the end).
    private var log: [Event] = []
    /// `devices[i]`: the engine's interned device of `log[i]`, -1 for none, so a compaction counts
    /// entries per device in an array rather than by hashing names (which cost 0.36 us per entry).
    private var devices: [Int32] = []
    /// `orders[i]`: the production order of `log[i]`'s event in the engine's queue, by which an
    /// entry is found to be numbered when its instant is released (its `seq` is 0 until then).
    private var orders: [Int] = []
    /// The entries not numbered yet: all of them lie after every numbered entry of an earlier
    /// instant but a few moved by `replace`, so numbering scans back from the end until it has
    /// seen this many.
    private var unnumbered = 0
    /// `seq` → position, built when a response names a `seq` and kept up while entries are
    /// appended and numbered; dropped when positions shift (compaction, replace, remove).
    private var positionsBySequence: [Int: Int]?
    /// The request ids that have entries, made when first asked for (an `add` asks) and kept up
    /// as entries are added; dropped when entries go. Without it every added request, most of them
    /// new ids, read the whole log.
    private var requestIDsWithEntries: Set<String>?
    /// The log's size at which it is next compacted.
    private var compactionSize = DeliveredLedger.smallestCompaction
    /// Devices forgotten (SPEC §12) whose entries are still in the log: dropped at the next
    /// compaction, or before the device's next entry, and answered as gone meanwhile. Forgetting
    /// comes in bursts (a fleet's time to live running out), which one pass then serves.
    private var forgotten: Set<Int32> = []

    /// Below this size the log is not compacted while notifications are added.
    private static let smallestCompaction = 1024

    init(limit: Int) {
        self.limit = limit
    }

    /// Adds an event of the interned `device` (-1 for none). Among the entries of its instant at
    /// the end of the log it takes its SPEC §4 place, so the list does not depend on the order the
    /// engine happened to evaluate fences in (which a rebuilt index, after a checkpoint, changes).
    mutating func add(_ event: Event, device: Int32, order: Int) {
        if !forgotten.isEmpty && forgotten.contains(device) { compact() }
        var position = log.count
        while position > 0, log[position - 1].time == event.time,
            Event.releasePrecedes(event, log[position - 1]) == true
        {
            position -= 1
        }
        if event.sequence == 0 && order >= 0 { unnumbered += 1 }
        requestIDsWithEntries?.insert(event.requestID)
        if position == log.count {
            log.append(event)
            devices.append(device)
            orders.append(order)
            if event.sequence != 0 { positionsBySequence?[event.sequence] = position }
        } else {
            // Only numbered entries are in the map; those of the open instant it passes are not.
            if positionsBySequence != nil, log[position...].contains(where: { $0.sequence != 0 }) {
                positionsBySequence = nil
            }
            log.insert(event, at: position)
            devices.insert(device, at: position)
            orders.insert(order, at: position)
        }
        if log.count >= compactionSize {
            compact()
            compactionSize = max(Self.smallestCompaction, 2 * log.count)
        }
    }

    /// Drops every entry of the device (it was forgotten), when the log next compacts.
    mutating func forget(device: Int32) {
        forgotten.insert(device)
    }

    /// Drops the forgotten devices' entries and every device's beyond its newest `limit`, keeping
    /// the order of the rest.
    private mutating func compact() {
        if !forgotten.isEmpty {
            let gone = forgotten
            forgotten = []
            let keeps = devices.map { !gone.contains($0) }
            keep { keeps[$0] }
        }
        guard log.count > limit, let top = devices.max() else { return }
        // Slot 0 counts the entries without a device.
        var counts = [Int32](repeating: 0, count: Int(top) + 2)
        var keeps = [Bool](repeating: false, count: log.count)
        for position in log.indices.reversed() {
            let slot = Int(devices[position]) + 1
            guard counts[slot] < limit else { continue }
            counts[slot] += 1
            keeps[position] = true
        }
        keep { keeps[$0] }
    }

    /// Keeps the entries at the positions `isKept` holds for, in order, in place: the log keeps its
    /// capacity, so the pages it grew into are written again rather than new ones faulted in.
    private mutating func keep(_ isKept: (Int) -> Bool) {
        var kept = 0
        unnumbered = 0
        for position in log.indices where isKept(position) {
            if kept != position {
                log.swapAt(kept, position)
                devices.swapAt(kept, position)
                orders.swapAt(kept, position)
            }
            if log[kept].sequence == 0 && orders[kept] >= 0 { unnumbered += 1 }
            kept += 1
        }
        if kept != log.count {
            positionsBySequence = nil
            requestIDsWithEntries = nil
        }
        log.removeLast(log.count - kept)
        devices.removeLast(devices.count - kept)
        orders.removeLast(orders.count - kept)
        // A log that shrank to a small part of what it grew to (a fleet forgotten) gives the
        // pages back; otherwise they are reused, as above.
        if log.capacity > 4 * max(log.count, Self.smallestCompaction) {
            log = Self.copy(log)
            devices = Self.copy(devices)
            orders = Self.copy(orders)
        }
    }

    /// A copy of `array` with room for its elements only.
    private static func copy<Element>(_ array: [Element]) -> [Element] {
        var copy: [Element] = []
        copy.reserveCapacity(array.count)
        copy.append(contentsOf: array)
        return copy
    }

    /// Sets `keep` for every device with an entry (the forgotten devices' entries go first).
    mutating func markDevices(in keep: inout [Bool]) {
        compact()
        for device in devices where device >= 0 { keep[Int(device)] = true }
    }

    /// Gives each entry's device the number `newID` maps it to (the engine's devices were
    /// renumbered); the forgotten devices' entries go first.
    mutating func renumber(_ newID: [Int32]) {
        compact()
        for position in devices.indices where devices[position] >= 0 {
            devices[position] = newID[Int(devices[position])]
        }
    }

    /// Moves `requestID`'s entries to the top, re-rendering them with `content`: device by device
    /// (in name order), each device's in their delivery order. Those of the instant at `clock`
    /// stay in that instant's SPEC §4 order (re-rendered), and the moved ones go just under it.
    ///
    /// The instant's entries are the last in the log and sorted, which `add` relies on; moved
    /// among them, an entry of another device made a later event of the instant stop short of
    /// its place, so that a device's entries lay in an order that depended on the other devices'
    /// (a sharded run, whose engines hold some devices each, kept and answered other entries).
    mutating func replace(
        requestID: String, content: NotificationContent, actions: [NotificationAction], at clock: Timestamp?
    ) {
        compact()
        var moved: [(position: Int, event: Event, device: Int32, order: Int)] = []
        let keeps = log.indices.map { position in
            guard log[position].requestID == requestID else { return true }
            if log[position].time == clock {
                log[position].content = Self.render(content, for: log[position])
                log[position].actions = actions
                return true
            }
            moved.append((position, log[position], devices[position], orders[position]))
            return false
        }
        guard !moved.isEmpty else { return }
        keep { keeps[$0] }
        moved.sort { a, b in
            if DeviceNames.precedes(a.event.device, b.event.device) { return true }
            if DeviceNames.precedes(b.event.device, a.event.device) { return false }
            return a.position < b.position
        }
        positionsBySequence = nil
        var top = log.count
        while top > 0, log[top - 1].time == clock { top -= 1 }
        for item in moved where item.event.sequence == 0 && item.order >= 0 { unnumbered += 1 }
        log.insert(
            contentsOf: moved.map { item in
                var event = item.event
                event.content = Self.render(content, for: event)
                event.actions = actions
                return event
            }, at: top)
        devices.insert(contentsOf: moved.map(\.device), at: top)
        orders.insert(contentsOf: moved.map(\.order), at: top)
    }

    private static func render(_ content: NotificationContent, for event: Event) -> NotificationContent {
        content.rendered(device: event.device, request: event.requestID, event: event.kind.rawValue, time: event.time)
    }

    mutating func remove(requestIDs: Set<String>) {
        compact()
        let keeps = log.map { !requestIDs.contains($0.requestID) }
        keep { keeps[$0] }
    }

    mutating func removeAll() {
        requestIDsWithEntries = nil
        log = []
        devices = []
        orders = []
        forgotten = []
        unnumbered = 0
        positionsBySequence = nil
        compactionSize = Self.smallestCompaction
    }

    /// Writes the `seq` each released event got into its entry: `orders[i]` and `events[i]` are
    /// the production order and the numbered event of one release.
    mutating func number(orders released: [Int], events: [Event]) {
        guard unnumbered > 0, !released.isEmpty else { return }
        var sequences: [Int: Int] = [:]
        sequences.reserveCapacity(released.count)
        for (order, event) in zip(released, events) { sequences[order] = event.sequence }
        var seen = 0
        var numbered = 0
        var position = log.count
        while seen < unnumbered, numbered < sequences.count, position > 0 {
            position -= 1
            guard log[position].sequence == 0, orders[position] >= 0 else { continue }
            seen += 1
            guard let sequence = sequences[orders[position]] else { continue }
            log[position].sequence = sequence
            positionsBySequence?[sequence] = position
            numbered += 1
        }
        unnumbered -= numbered
    }

    /// The position of the entry numbered `sequence`, or `nil` (also for one beyond its device's
    /// newest `limit`, see ``isKept(_:)``).
    mutating func position(ofSequence sequence: Int) -> Int? {
        if positionsBySequence == nil {
            var positions: [Int: Int] = [:]
            positions.reserveCapacity(log.count)
            for (position, event) in log.enumerated() where event.sequence != 0 {
                positions[event.sequence] = position
            }
            positionsBySequence = positions
        }
        return positionsBySequence?[sequence].flatMap { isKept($0) ? $0 : nil }
    }

    /// The position of the numbered entry of `request` for the interned `device` (-1 for none)
    /// with the highest `seq` among the device's newest `limit` (those listed), or `nil`.
    ///
    /// The highest `seq`, not the last such entry in the log: within an instant entries lie in
    /// SPEC §4 order, which is not always the order they were numbered in (an event at a time a
    /// `tick` has already closed goes among that instant's entries by that order).
    func latestPosition(request: String, device: Int32) -> Int? {
        listedPositions(of: device).lazy.filter { log[$0].sequence > 0 && log[$0].requestID == request }
            .max { log[$0].sequence < log[$1].sequence }
    }

    /// The positions of the interned `device`'s newest `limit` entries (those listed), newest
    /// first; none for a forgotten device.
    private func listedPositions(of device: Int32) -> UnfoldSequence<Int, (Int, Int)> {
        let gone = !forgotten.isEmpty && forgotten.contains(device)
        return sequence(state: (gone ? 0 : devices.count, 0)) { state in
            while state.0 > 0, state.1 < limit {
                state.0 -= 1
                guard devices[state.0] == device else { continue }
                state.1 += 1
                return state.0
            }
            return nil
        }
    }

    /// Whether the entry at `position` is among its device's newest `limit`: one that is not is
    /// dropped at the next compaction, whenever that comes, so it is answered as if already gone
    /// (lookups must not depend on when the log last compacted).
    private func isKept(_ position: Int) -> Bool {
        let device = devices[position]
        if !forgotten.isEmpty && forgotten.contains(device) { return false }
        var newer = 0
        for later in (position + 1)..<log.count where devices[later] == device {
            newer += 1
            if newer >= limit { return false }
        }
        return true
    }

    /// The entry at `position`.
    subscript(position: Int) -> Event { log[position] }

    /// Whether some entry is `requestID`'s.
    mutating func holdsEntries(of requestID: String) -> Bool {
        if requestIDsWithEntries == nil { requestIDsWithEntries = Set(log.lazy.map(\.requestID)) }
        return requestIDsWithEntries!.contains(requestID)
    }

    /// Whether some entry the list shows is `requestID`'s: it compacts first, so entries past a
    /// device's limit or of a forgotten device do not count.
    mutating func listsEntries(of requestID: String) -> Bool {
        compact()
        return holdsEntries(of: requestID)
    }

    /// Records `response` on the entry at `position`.
    mutating func record(_ response: ResponseReport, at position: Int) {
        log[position].response = response
    }

    /// Every entry, newest first.
    var events: [Event] {
        var ledger = self
        ledger.compact()
        return ledger.log.reversed()
    }
}

extension DeliveredLedger {
    /// The entries kept, oldest first, each with its interned device (-1 for none) and production
    /// order, compacted.
    var checkpointState: [(event: Event, device: Int32, order: Int)] {
        var ledger = self
        ledger.compact()
        return zip(zip(ledger.log, ledger.devices), ledger.orders).map { ($0.0, $0.1, $1) }
    }

    /// A ledger holding `entries`, oldest first.
    init(limit: Int, restoring entries: [(event: Event, device: Int32, order: Int)]) {
        self.init(limit: limit)
        log = entries.map(\.event)
        devices = entries.map(\.device)
        orders = entries.map(\.order)
        unnumbered = zip(log, orders).reduce(0) { $0 + ($1.0.sequence == 0 && $1.1 >= 0 ? 1 : 0) }
        compact()
        compactionSize = max(Self.smallestCompaction, 2 * log.count)
    }
}
