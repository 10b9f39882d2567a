import TestSupport
import Testing

@testable import Fenceline

@Suite struct EventQueueTests {
    /// Events at random times, released at random limits (some before every pending event, some
    /// between them, some past them all, inclusive or not): each release gives exactly the events
    /// it covers, in SPEC §4 order, numbered on from the last, and keeps the rest for later.
    @Test func releasesGiveWhatTheLimitCoversInOrder() {
        var generator = SplitMix(state: 11)
        let kinds: [EventKind] = [.enter, .exit, .dwell, .state]
        var queue = EventQueue()
        var held: [(event: Event, order: Int)] = []
        var produced = 0
        var released = 0
        for round in 0..<400 {
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let event = Event(
                    time: Timestamp(microseconds: Int64.random(in: 0...40, using: &generator) * 1_000_000),
                    requestID: "r\(Int.random(in: 0...3, using: &generator))",
                    device: Bool.random(using: &generator) ? "d\(Int.random(in: 0...2, using: &generator))" : nil,
                    trigger: .region, kind: kinds[Int.random(in: 0..<kinds.count, using: &generator)])
                produced += 1
                queue.append(event, timerBound: nil)
                held.append((event, produced))
            }
            let inclusive = Bool.random(using: &generator)
            let limit =
                round % 50 == 49
                ? nil : Timestamp(microseconds: Int64.random(in: -5...45, using: &generator) * 1_000_000)
            let covered = held.filter { item in
                guard let limit else { return true }
                return item.event.time < limit || (inclusive && item.event.time == limit)
            }
            held.removeAll { item in covered.contains { $0.order == item.order } }
            let expected = covered.sorted { a, b in
                (a.event.time, a.event.kind.rank, a.event.requestID, a.event.device ?? "", a.order)
                    < (b.event.time, b.event.kind.rank, b.event.requestID, b.event.device ?? "", b.order)
            }
            let got = queue.release(before: limit, inclusive: inclusive).events
            let numbered = expected.enumerated().map { offset, item in
                var event = item.event
                event.sequence = released + offset + 1
                return event
            }
            released += got.count
            let matches = got == numbered
            #expect(matches, "round \(round): \(got.count) released, \(numbered.count) expected")
            #expect(queue.isEmpty == held.isEmpty)
        }
    }
}
