/// The delivered notifications (SPEC §8): every firing adds an entry; re-adding a request moves its
/// entries to the top with the new content; at most `limit` entries per device, oldest dropped.
struct DeliveredLedger {
    struct Entry {
        var event: Event
        /// Larger is newer; the list reads newest first.
        var order: UInt64
    }

    let limit: Int
    private var byDevice: [String?: [Entry]] = [:]
    private var nextOrder: UInt64 = 0

    init(limit: Int) {
        self.limit = limit
    }

    mutating func add(_ event: Event) {
        nextOrder += 1
        // Mutated in place: copying the list out and back would copy it on every notification.
        // A list may run to twice the limit before its oldest are dropped, so a busy device costs
        // one shift per `limit` notifications rather than one per notification; readers trim first.
        Self.append(Entry(event: event, order: nextOrder), to: &byDevice[event.device, default: []], limit: limit)
    }

    /// Appends to one device's list, found once (a lookup hashes the name).
    private static func append(_ entry: Entry, to list: inout [Entry], limit: Int) {
        list.append(entry)
        if list.count > 2 * limit { list.removeFirst(list.count - limit) }
    }

    /// Drops every list's entries beyond the newest `limit`.
    private mutating func trim() {
        for device in Array(byDevice.keys) {
            if let count = byDevice[device]?.count, count > limit { byDevice[device]!.removeFirst(count - limit) }
        }
    }

    /// Moves `requestID`'s entries to the top, re-rendering them with `content`.
    mutating func replace(requestID: String, content: NotificationContent, actions: [NotificationAction]) {
        trim()
        for device in byDevice.keys.sorted(by: { ($0 ?? "") < ($1 ?? "") }) {
            guard var entries = byDevice[device], entries.contains(where: { $0.event.requestID == requestID }) else {
                continue
            }
            var moved: [Entry] = []
            entries.removeAll { entry in
                guard entry.event.requestID == requestID else { return false }
                moved.append(entry)
                return true
            }
            for var entry in moved.sorted(by: { $0.order < $1.order }) {
                nextOrder += 1
                let event = entry.event
                entry.event.content = content.rendered(
                    device: event.device, request: requestID, event: event.kind.rawValue, time: event.time)
                entry.event.actions = actions
                entry.order = nextOrder
                entries.append(entry)
            }
            byDevice[device] = entries
        }
    }

    mutating func remove(requestIDs: Set<String>) {
        trim()
        for device in Array(byDevice.keys) {
            byDevice[device]?.removeAll { requestIDs.contains($0.event.requestID) }
            if byDevice[device]?.isEmpty == true { byDevice[device] = nil }
        }
    }

    mutating func removeAll() {
        byDevice = [:]
    }

    /// Every entry, newest first.
    var events: [Event] {
        byDevice.values.map { $0.suffix(limit) }.joined().sorted { $0.order > $1.order }.map(\.event)
    }
}
