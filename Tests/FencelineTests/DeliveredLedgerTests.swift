import TestSupport
import Testing

@testable import Fenceline

@Suite struct DeliveredLedgerTests {
    /// The delivered list as SPEC §8 states it, kept the plain way: a list per device, newest last,
    /// cut to the limit at every addition.
    struct Reference {
        let limit: Int
        var byDevice: [String?: [(event: Event, order: Int)]] = [:]
        var order = 0

        mutating func add(_ event: Event) {
            order += 1
            byDevice[event.device, default: []].append((event, order))
            if byDevice[event.device]!.count > limit { byDevice[event.device]!.removeFirst() }
        }

        mutating func replace(requestID: String, content: NotificationContent) {
            for device in byDevice.keys.sorted(by: { ($0 ?? "") < ($1 ?? "") }) {
                let moved = byDevice[device]!.filter { $0.event.requestID == requestID }
                byDevice[device]!.removeAll { $0.event.requestID == requestID }
                for var item in moved {
                    order += 1
                    item.order = order
                    item.event.content = content.rendered(
                        device: item.event.device, request: requestID, event: item.event.kind.rawValue,
                        time: item.event.time)
                    byDevice[device]!.append(item)
                }
            }
        }

        mutating func remove(requestIDs: Set<String>) {
            for device in byDevice.keys { byDevice[device]!.removeAll { requestIDs.contains($0.event.requestID) } }
        }

        var events: [Event] { byDevice.values.joined().sorted { $0.order > $1.order }.map(\.event) }
    }

    /// Thousands of notifications over a few devices (so the log is compacted many times), with
    /// re-adds, removals and reads in between: the ledger always lists what the reference lists,
    /// newest first, at most `limit` per device.
    @Test(arguments: [0, 1, 3, 64])
    func listsWhatTheSpecKeeps(limit: Int) {
        var generator = SplitMix(state: UInt64(17 + limit))
        var ledger = DeliveredLedger(limit: limit)
        var reference = Reference(limit: limit)
        let devices: [String?] = [nil, "a", "b", "c", "dev-0004"]
        for step in 0..<6_000 {
            let roll = Int.random(in: 0..<100, using: &generator)
            let request = "r\(Int.random(in: 0..<6, using: &generator))"
            if roll < 90 {
                // Interned as the engine does: -1 for no device, then 0, 1, ...
                let device = Int.random(in: 0..<devices.count, using: &generator)
                let event = Event(
                    time: Timestamp(microseconds: Int64(step) * 1_000_000), requestID: request,
                    device: devices[device], trigger: .region, kind: Bool.random(using: &generator) ? .enter : .exit)
                ledger.add(event, device: Int32(device - 1), order: step + 1)
                // Its instant is released at once: a numbered entry, which `replace` moves.
                var numbered = event
                numbered.sequence = step + 1
                ledger.number(orders: [step + 1], events: [numbered])
                reference.add(numbered)
            } else if roll < 94 {
                let content = NotificationContent(title: "{request} \(step)")
                ledger.replace(requestID: request, content: content, actions: [])
                reference.replace(requestID: request, content: content)
            } else if roll < 96 {
                ledger.remove(requestIDs: [request])
                reference.remove(requestIDs: [request])
            } else if roll < 97 && step % 3 == 0 {
                ledger.removeAll()
                reference = Reference(limit: limit)
            }
            if step % 97 == 0 || roll >= 90 {
                let listed = ledger.events
                let expected = reference.events
                #expect(listed == expected, "step \(step): \(listed.count) listed, \(expected.count) expected")
                if listed != expected { return }
            }
        }
        #expect(ledger.events == reference.events)
    }

    /// A re-add while an instant is open moves the request's entries to the top (SPEC §8), among
    /// them a numbered one that then lies among the instant's: a later event of the instant stops
    /// there, above an entry of its own request and device released after it. The latest of a
    /// request and device is its highest `seq` all the same.
    @Test func theLatestOfARequestAndDeviceIsItsHighestSeqAfterAReAddMidInstant() throws {
        var ledger = DeliveredLedger(limit: 64)
        func event(_ request: String, _ seconds: Int64, _ kind: EventKind, sequence: Int = 0) -> Event {
            var event = Event(
                time: Timestamp(microseconds: seconds * 1_000_000), requestID: request, device: "a",
                trigger: .region, kind: kind)
            event.sequence = sequence
            return event
        }
        ledger.add(event("r1", 10, .enter, sequence: 1), device: 0, order: -1)
        ledger.add(event("r2", 15, .enter, sequence: 2), device: 0, order: -1)
        // The open instant at 20 s: r2's enter, then r1's (which goes first: same kind, by request).
        ledger.add(event("r2", 20, .enter), device: 0, order: 3)
        ledger.add(event("r1", 20, .enter), device: 0, order: 4)
        ledger.replace(requestID: "r1", content: NotificationContent(title: "new {request}"), actions: [])
        ledger.add(event("r2", 20, .exit), device: 0, order: 5)
        // Released exits first, then enters by request.
        let released = [
            (5, event("r2", 20, .exit, sequence: 3)), (4, event("r1", 20, .enter, sequence: 4)),
            (3, event("r2", 20, .enter, sequence: 5)),
        ]
        ledger.number(orders: released.map(\.0), events: released.map(\.1))
        #expect(ledger.events.map(\.sequence) == [4, 3, 1, 5, 2])
        #expect(ledger.events.filter { $0.requestID == "r1" }.map(\.content.title) == ["new r1", "new r1"])
        let latest = try #require(ledger.latestPosition(request: "r2", device: 0))
        #expect(ledger[latest].sequence == 5)
    }

    /// Instants of random events with re-adds in between, each instant's events added in two
    /// different orders: the two ledgers list the same, and the latest of each request and device
    /// is its highest `seq`.
    @Test(arguments: 0..<40)
    func theListAndTheLatestDoNotDependOnTheEvaluationOrder(seed: UInt64) throws {
        var generator = SplitMix(state: seed &* 7919 &+ 3)
        var ledgers = [DeliveredLedger(limit: 64), DeliveredLedger(limit: 64)]
        let requests = ["r0", "r1", "r2", "r3"]
        let devices: [String?] = [nil, "a", "b"]
        let kinds: [EventKind] = [.exit, .enter, .dwell]
        var sequence = 0
        var order = 0
        for instant in 1...30 {
            let time = Timestamp(microseconds: Int64(instant) * 1_000_000)
            // Distinct events (no two of one request, device and kind), so their release order is
            // the SPEC §4 order alone.
            var keys = Set<String>()
            var groups: [[(event: Event, device: Int32)]] = [[], []]
            for _ in 0..<Int.random(in: 0..<9, using: &generator) {
                let request = requests.randomElement(using: &generator)!
                let device = Int.random(in: 0..<devices.count, using: &generator)
                let kind = kinds.randomElement(using: &generator)!
                guard keys.insert("\(request) \(device) \(kind)").inserted else { continue }
                let event = Event(
                    time: time, requestID: request, device: devices[device], trigger: .region, kind: kind)
                groups[Int.random(in: 0..<2, using: &generator)].append((event, Int32(device - 1)))
            }
            let reAdded = Bool.random(using: &generator) ? requests.randomElement(using: &generator) : nil
            var produced: [(event: Event, order: Int)] = []
            for (index, var ledger) in ledgers.enumerated() {
                produced = []
                var next = order
                for (part, group) in groups.enumerated() {
                    if part == 1, let reAdded {
                        ledger.replace(
                            requestID: reAdded, content: NotificationContent(title: "v\(instant)"), actions: [])
                    }
                    // The first ledger adds in the order generated, the second in reverse.
                    for (event, device) in index == 0 ? group : group.reversed() {
                        next += 1
                        ledger.add(event, device: device, order: next)
                        produced.append((event, next))
                    }
                }
                // The instant closes: its events are numbered in release order.
                let release = produced.sorted { Event.releasePrecedes($0.event, $1.event) ?? ($0.order < $1.order) }
                var numbered: [Event] = []
                for (offset, item) in release.enumerated() {
                    var event = item.event
                    event.sequence = sequence + offset + 1
                    numbered.append(event)
                }
                ledger.number(orders: release.map(\.order), events: numbered)
                ledgers[index] = ledger
            }
            order += produced.count
            sequence += produced.count
            let listed = ledgers[0].events
            #expect(listed.map(\.sequence) == ledgers[1].events.map(\.sequence), "instant \(instant)")
            for request in requests {
                for device in devices {
                    let seqs = listed.filter { $0.requestID == request && $0.device == device }.map(\.sequence)
                    let interned = Int32(devices.firstIndex(of: device)! - 1)
                    let latest = ledgers[0].latestPosition(request: request, device: interned).map { ledgers[0][$0] }
                    #expect(latest?.sequence == seqs.max(), "instant \(instant): \(request) \(device ?? "-")")
                }
            }
        }
    }
}
