/// The delivered notifications (SPEC §8): every firing adds an entry; re-adding a request moves its
/// entries to the top with the new content; at most `limit` entries per device, oldest dropped.
///
/// One log in delivery order rather than a list per device: a notification is an append to its
/// warm end, where a list per device cost a hash of the device name, a dictionary probe and a
/// write to that device's cold list (over a microsecond per event, measured). A device's entries
/// beyond its newest `limit` are dropped when the log is compacted: when it has doubled since the
/// last compaction (so each entry pays for its share of one pass), and before anything reads or
/// rewrites it. The log so holds at most about twice the entries the limit keeps.
struct DeliveredLedger {
    let limit: Int
    /// Every entry kept, oldest first (the order is the delivery order, re-adds moved to the end).
    private var log: [Event] = []
    /// The log's size at which it is next compacted.
    private var compactionSize = DeliveredLedger.smallestCompaction

    /// Below this size the log is not compacted while notifications are added.
    private static let smallestCompaction = 1024

    init(limit: Int) {
        self.limit = limit
    }

    mutating func add(_ event: Event) {
        log.append(event)
        if log.count >= compactionSize {
            compact()
            compactionSize = max(Self.smallestCompaction, 2 * log.count)
        }
    }

    /// Drops every device's entries beyond its newest `limit`, keeping the order of the rest.
    private mutating func compact() {
        guard log.count > limit else { return }
        var seen: [String?: Int] = [:]
        var keeps = [Bool](repeating: false, count: log.count)
        var kept = 0
        for position in log.indices.reversed() {
            let count = seen[log[position].device, default: 0]
            guard count < limit else { continue }
            seen[log[position].device] = count + 1
            keeps[position] = true
            kept += 1
        }
        guard kept < log.count else { return }
        var compacted: [Event] = []
        compacted.reserveCapacity(kept)
        for position in log.indices where keeps[position] { compacted.append(log[position]) }
        log = compacted
    }

    /// Moves `requestID`'s entries to the top, re-rendering them with `content`: device by device
    /// (in name order), each device's in their delivery order.
    mutating func replace(requestID: String, content: NotificationContent, actions: [NotificationAction]) {
        compact()
        var moved: [(position: Int, event: Event)] = []
        var kept: [Event] = []
        kept.reserveCapacity(log.count)
        for (position, event) in log.enumerated() {
            if event.requestID == requestID { moved.append((position, event)) } else { kept.append(event) }
        }
        guard !moved.isEmpty else { return }
        moved.sort { a, b in
            let deviceA = a.event.device ?? "", deviceB = b.event.device ?? ""
            return deviceA != deviceB ? deviceA < deviceB : a.position < b.position
        }
        for (_, var event) in moved {
            event.content = content.rendered(
                device: event.device, request: requestID, event: event.kind.rawValue, time: event.time)
            event.actions = actions
            kept.append(event)
        }
        log = kept
    }

    mutating func remove(requestIDs: Set<String>) {
        compact()
        log.removeAll { requestIDs.contains($0.requestID) }
    }

    mutating func removeAll() {
        log = []
        compactionSize = Self.smallestCompaction
    }

    /// Every entry, newest first.
    var events: [Event] {
        var ledger = self
        ledger.compact()
        return ledger.log.reversed()
    }
}
