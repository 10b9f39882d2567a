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
                // At a clock no entry has: every entry of the request moves.
                ledger.replace(
                    requestID: request, content: content, actions: [],
                    at: Timestamp(microseconds: Int64(step) * 1_000_000))
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
            // A request with listed entries is always known to have some (its set of ids, kept up
            // from here on, must follow every addition and removal); asked at every step.
            let asked = "r\(step % 7)"
            let holds = ledger.holdsEntries(of: asked)
            if reference.events.contains(where: { $0.requestID == asked }) {
                #expect(holds, "step \(step): \(asked)")
            }
        }
        #expect(ledger.events == reference.events)
    }

    /// A re-add while an instant is open moves the request's older entries to the top, but under
    /// the instant's, which stay in their SPEC §4 order with the new content: a later event of the
    /// instant takes its place among them, and the latest of a request and device is its highest
    /// `seq`.
    @Test func aReAddMidInstantMovesTheOlderEntriesUnderTheInstant() throws {
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
        ledger.replace(
            requestID: "r1", content: NotificationContent(title: "new {request}"), actions: [],
            at: Timestamp(microseconds: 20_000_000))
        ledger.add(event("r2", 20, .exit), device: 0, order: 5)
        // Released exits first, then enters by request.
        let released = [
            (5, event("r2", 20, .exit, sequence: 3)), (4, event("r1", 20, .enter, sequence: 4)),
            (3, event("r2", 20, .enter, sequence: 5)),
        ]
        ledger.number(orders: released.map(\.0), events: released.map(\.1))
        #expect(ledger.events.map(\.sequence) == [5, 4, 3, 1, 2])
        #expect(ledger.events.filter { $0.requestID == "r1" }.map(\.content.title) == ["new r1", "new r1"])
        let latest = try #require(ledger.latestPosition(request: "r2", device: 0))
        #expect(ledger[latest].sequence == 5)
    }

    /// Instants of random events with re-adds and ticks (which number the instant's events so far)
    /// in between, fed to one ledger in two evaluation orders, and to one ledger per device
    /// numbered only every few instants, as a sharded run's engines are: the two list the same; a
    /// device's own ledger lists what the whole one lists of it, whatever the limit; and the latest
    /// of each request and device is the highest `seq` listed, in all of them.
    @Test(arguments: [1, 2, 3, 64], 0..<12)
    func aDevicesEntriesDoNotDependOnTheOthersOrOnTheEvaluationOrder(limit: Int, seed: UInt64) throws {
        var generator = SplitMix(state: seed &* 7919 &+ UInt64(limit))
        let requests = ["r0", "r1", "r2", "r3"]
        let devices: [String?] = [nil, "a", "b"]
        let kinds: [EventKind] = [.exit, .enter, .dwell]
        var whole = [DeliveredLedger(limit: limit), DeliveredLedger(limit: limit)]
        var own = devices.map { _ in DeliveredLedger(limit: limit) }
        var unnumbered = devices.map { _ in [(order: Int, key: String)]() }
        var sequences: [String: Int] = [:]
        var sequence = 0
        var order = 0
        func key(_ event: Event) -> String {
            "\(event.time.microseconds) \(event.requestID) \(event.device ?? "-") \(event.kind)"
        }
        for instant in 1...40 {
            let time = Timestamp(microseconds: Int64(instant) * 1_000_000)
            // Distinct events (no two of one request, device and kind), so their release order is
            // the SPEC §4 order alone; the first group is released by a tick when there is one.
            var keys = Set<String>()
            var groups: [[(event: Event, device: Int)]] = [[], []]
            for _ in 0..<Int.random(in: 0..<9, using: &generator) {
                let request = requests.randomElement(using: &generator)!
                let device = Int.random(in: 0..<devices.count, using: &generator)
                let kind = kinds.randomElement(using: &generator)!
                guard keys.insert("\(request) \(device) \(kind)").inserted else { continue }
                let event = Event(time: time, requestID: request, device: devices[device], trigger: .region, kind: kind)
                groups[Int.random(in: 0..<2, using: &generator)].append((event, device))
            }
            let ticks = Int.random(in: 0..<4, using: &generator) == 0
            let reAdded = Bool.random(using: &generator) ? requests.randomElement(using: &generator) : nil
            let content = NotificationContent(title: "v\(instant)")
            var produced: [(event: Event, order: Int)] = []
            var secondOrders: [String: Int] = [:]
            for (part, group) in groups.enumerated() {
                if part == 1, let reAdded {
                    for index in whole.indices {
                        whole[index].replace(requestID: reAdded, content: content, actions: [], at: time)
                    }
                    for index in own.indices {
                        own[index].replace(requestID: reAdded, content: content, actions: [], at: time)
                    }
                }
                for (index, events) in [group, group.reversed()].enumerated() {
                    var next = order
                    for (event, device) in events {
                        next += 1
                        whole[index].add(event, device: Int32(device - 1), order: next)
                        if index == 1 { secondOrders[key(event)] = next }
                        if index == 0 {
                            own[device].add(event, device: Int32(device - 1), order: next)
                            unnumbered[device].append((next, key(event)))
                            produced.append((event, next))
                        }
                    }
                }
                order += group.count
                // The instant closes (or a tick closes it so far): its events are numbered in release order.
                guard part == 1 || ticks else { continue }
                let release = produced.sorted { Event.releasePrecedes($0.event, $1.event) ?? ($0.order < $1.order) }
                var numbered: [Event] = []
                for item in release {
                    var event = item.event
                    sequence += 1
                    event.sequence = sequence
                    sequences[key(event)] = sequence
                    numbered.append(event)
                }
                // The second ledger's production orders differ; it is numbered by the same events.
                whole[0].number(orders: release.map(\.order), events: numbered)
                whole[1].number(orders: numbered.map { secondOrders[key($0)]! }, events: numbered)
                produced = []
            }
            // The per-device ledgers are numbered every few instants, as a batch of a sharded run.
            guard instant % 3 == 0 || instant == 40 else { continue }
            for device in devices.indices where !unnumbered[device].isEmpty {
                let items = unnumbered[device]
                own[device].number(
                    orders: items.map(\.order),
                    events: items.map { item in
                        var event = Event(time: time, requestID: "", device: nil, trigger: .region, kind: .enter)
                        event.sequence = sequences[item.key]!
                        return event
                    })
                unnumbered[device] = []
            }
            let listed = whole[0].events
            #expect(listed.map(\.sequence) == whole[1].events.map(\.sequence), "instant \(instant)")
            for (device, name) in devices.enumerated() {
                let mine = listed.filter { $0.device == name }
                #expect(
                    mine.map(\.sequence) == own[device].events.map(\.sequence), "instant \(instant): \(name ?? "-")")
                for request in requests {
                    let highest = mine.filter { $0.requestID == request }.map(\.sequence).max()
                    let interned = Int32(device - 1)
                    for ledger in [whole[0], whole[1], own[device]] {
                        let latest = ledger.latestPosition(request: request, device: interned).map {
                            ledger[$0].sequence
                        }
                        #expect(latest == highest, "instant \(instant): \(request) \(name ?? "-")")
                    }
                }
            }
        }
    }
}
