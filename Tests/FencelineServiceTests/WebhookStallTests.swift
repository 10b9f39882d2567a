import Fenceline
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import TestSupport
import Testing

@testable import FencelineService

/// The delivery loop against real receivers on loopback: one that takes every request and never
/// answers, one that answers at once. The stalled webhooks hold no more than their shares of
/// tries, and the other gets all of its events while those tries hang.
@Suite struct WebhookStallTests {
    /// Counts requests per path and how many of the stalling path are open at once.
    final class Receiver: Sendable {
        let stalling = Mutex((open: 0, most: 0, released: false))
        let answered = Mutex<[Int]>([])

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("stall") { _, _ -> HTTPResponse.Status in
                self.stalling.withLock {
                    $0.open += 1
                    $0.most = max($0.most, $0.open)
                }
                defer { self.stalling.withLock { $0.open -= 1 } }
                // Held until the test ends.
                while !self.stalling.withLock({ $0.released }) { try await Task.sleep(for: .milliseconds(20)) }
                return .ok
            }
            router.post("fast") { request, _ -> HTTPResponse.Status in
                let seq = Int(request.headers[.init("Fenceline-Event-Id")!] ?? "") ?? -1
                self.answered.withLock { $0.append(seq) }
                return .ok
            }
            return router
        }
    }

    @Test(.timeLimit(.minutes(2))) func stalledReceiversHoldOnlyTheirShares() async throws {
        let directory = Scratch.root.appendingPathComponent("stall-\(UUID().uuidString)")
        let store = try ServiceStore(directory: directory.path)
        let receiver = Receiver()
        let port = Mutex<Int?>(nil)
        var quiet = Logger(label: "receiver")
        quiet.logLevel = .critical  // its own cancellation at the end is not news
        let app = Application(
            router: receiver.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port } },
            logger: quiet)
        let server = Task { try await app.run() }
        defer { server.cancel() }
        var waited = 0
        while port.withLock({ $0 }) == nil && waited < 500 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        let listening = try #require(port.withLock { $0 })

        // Four webhooks on the stalling path, then one on the answering path: together the four
        // would fill every try the loop allows, were it not shared.
        let webhooks = ["stall1", "stall2", "stall3", "stall4", "fast"]
        for (order, id) in webhooks.enumerated() {
            let path = id.hasPrefix("stall") ? "stall" : id
            try store.addWebhook(
                .init(
                    id: id, url: "http://127.0.0.1:\(listening)/\(path)", secret: "s", requests: nil, events: nil,
                    created: Date().timeIntervalSince1970 + Double(order)))
        }
        // 20 devices with one event each, queued to every webhook.
        let events = (1...20).map { seq in
            ServiceStore.LoggedEvent(
                seq: seq, kind: "enter", device: "d\(seq)", request: "r", json: Array("{\"seq\":\(seq)}".utf8))
        }
        try store.commit(
            lines: [Array("{}".utf8)], events: events,
            deliveries: events.flatMap { event in
                webhooks.map { .init(webhook: $0, seq: event.seq, device: event.device) }
            }, idempotency: nil)

        // The stalled tries never time out during the test: had they held every connection to the
        // host, the answering receiver would get nothing however long the test waited.
        var delivery = WebhookDelivery(store: store, metrics: ServiceMetrics(), logger: Logger(label: "delivery"))
        delivery.answerTimeout = .seconds(600)
        let loop = Task { [delivery] in try await delivery.run() }
        defer { loop.cancel() }
        let start = ContinuousClock.now
        while receiver.answered.withLock({ $0.count }) < events.count, ContinuousClock.now - start < .seconds(40) {
            try await Task.sleep(for: .milliseconds(20))
        }
        // While the stalled tries hang, every event reached the answering receiver.
        #expect(receiver.answered.withLock { $0.sorted() } == Array(1...20))
        let stalled = receiver.stalling.withLock { $0 }
        let shares = 4 * WebhookDelivery.share(among: 5)
        #expect(stalled.most == shares, "the stalled webhooks got exactly their shares")
        #expect(stalled.open == shares)
        receiver.stalling.withLock { $0.released = true }
    }
}

/// A receiver that refuses connections (nothing listens on its port) fails each try at once, to
/// be retried on the webhook's backoff, rather than after the time a try may wait for an answer.
@Suite struct WebhookRefusedTests {
    @Test(.timeLimit(.minutes(5))) func aRefusedConnectionFailsAtOnce() async throws {
        let directory = Scratch.root.appendingPathComponent("refused-\(UUID().uuidString)")
        let store = try ServiceStore(directory: directory.path)
        // The discard port, on which nothing listens here (as in the outbox tests).
        try store.addWebhook(
            .init(
                id: "w", url: "http://127.0.0.1:9/", secret: "s", requests: nil, events: nil,
                created: Date().timeIntervalSince1970))
        let event = ServiceStore.LoggedEvent(seq: 1, kind: "enter", device: "d", request: "r", json: Array("{}".utf8))
        try store.commit(
            lines: [Array("{}".utf8)], events: [event], deliveries: [.init(webhook: "w", seq: 1, device: "d")],
            idempotency: nil)
        // A try may wait two minutes here: had the client retried the connection itself until
        // then, the first failure would come after them, however idle or busy the machine.
        var delivery = WebhookDelivery(store: store, metrics: ServiceMetrics(), logger: Logger(label: "delivery"))
        delivery.answerTimeout = .seconds(120)
        let loop = Task { [delivery] in try await delivery.run() }
        defer { loop.cancel() }
        let start = ContinuousClock.now
        var failed = 0
        while failed == 0, ContinuousClock.now - start < .seconds(60) {
            try await Task.sleep(for: .milliseconds(50))
            failed = try store.webhooks().first?.failed ?? 0
        }
        #expect(failed >= 1, "no failed try after \(ContinuousClock.now - start)")
    }
}
