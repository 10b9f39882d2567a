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
                reference.add(event)
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
}
