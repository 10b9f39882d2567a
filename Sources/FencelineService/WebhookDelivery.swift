import AsyncHTTPClient
import CoreMetrics
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Delivers the outbox to the webhooks (SPEC §11, webhooks): each event as its §8 JSON, signed
/// with HMAC-SHA256 of the body under the webhook's secret, at least once. Only the first
/// undelivered event of each (webhook, device) is tried, so a device's events arrive in `seq`
/// order; a failure (an answer other than 2xx, or none in 10 s) is retried after 1 s, doubling up
/// to 5 min, for 24 h, then given up and counted. The outbox lives in the store, so a restart
/// resumes where delivery stopped; on shutdown what is due is drained for up to 10 s.
struct WebhookDelivery: Service {
    let store: ServiceStore
    let metrics: ServiceMetrics
    let logger: Logger

    /// How long a receiver has to answer (10 s; a test that stalls one on purpose waits longer).
    var answerTimeout = TimeAmount.seconds(10)
    static let longestBackoff = 300.0
    static let drainPeriod = Duration.seconds(10)
    /// Deliveries tried at once, over every webhook and to one: a receiver that stalls holds at
    /// most its own share. The pool allows all of them to one host, since several webhooks often
    /// share a receiver: one stalled path must not queue the others behind its connections.
    static let concurrency = 32
    static let concurrencyPerWebhook = 8

    func run() async throws {
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                redirectConfiguration: .disallow,
                timeout: .init(connect: answerTimeout, read: answerTimeout),
                connectionPool: .init(
                    idleTimeout: .seconds(60),
                    concurrentHTTP1ConnectionsPerHostSoftLimit: Self.concurrency)))
        // Each (webhook, device) has at most one try in flight, so its events go in seq order.
        await withTaskGroup(of: DeviceKey?.self) { group in
            var inFlight: Set<DeviceKey> = []
            var perWebhook: [String: Int] = [:]
            var drainEnd: ContinuousClock.Instant?
            var sleeping = false
            var lastExpiry = ContinuousClock.now - .seconds(3600)
            while !Task.isCancelled {
                if drainEnd == nil && Task.isShuttingDownGracefully { drainEnd = .now + Self.drainPeriod }
                if let drainEnd, ContinuousClock.now >= drainEnd { break }
                let now = Date().timeIntervalSince1970
                var due: [ServiceStore.DueDelivery] = []
                do {
                    if ContinuousClock.now - lastExpiry >= .seconds(60) {
                        lastExpiry = .now
                        let expired = try store.expireDeliveries(now: now)
                        if expired > 0 {
                            metrics.webhookFailures.increment(by: expired)
                            metrics.webhookGivenUp.increment(by: expired)
                            logger.warning("gave up webhook deliveries after 24 h", metadata: ["events": "\(expired)"])
                        }
                    }
                    due = try store.dueDeliveries(now: now, limitPerWebhook: Self.concurrencyPerWebhook * 2)
                } catch {
                    logger.error("reading the webhook outbox failed", metadata: ["error": "\(error)"])
                }
                for delivery in Self.startable(due, inFlight: &inFlight, perWebhook: &perWebhook) {
                    group.addTask {
                        await deliver(delivery, with: client)
                        return DeviceKey(webhook: delivery.webhook, device: delivery.device)
                    }
                }
                // Nothing in flight and nothing due: drained.
                if inFlight.isEmpty && drainEnd != nil { break }
                // Wake when a try ends (its device's next event may be due) or after a tenth of a
                // second, to look for newly committed events; one sleeper at a time.
                if !sleeping {
                    sleeping = true
                    group.addTask {
                        try? await Task.sleep(for: .milliseconds(100))
                        return nil
                    }
                }
                switch await group.next() {
                case .some(.some(let finished)):
                    inFlight.remove(finished)
                    perWebhook[finished.webhook, default: 1] -= 1
                case .some(.none): sleeping = false
                case .none: break
                }
            }
            group.cancelAll()
        }
        try? await client.shutdown()
    }

    /// The deliveries of `due` to start now, in order, counted into `inFlight` and `perWebhook`:
    /// none of a (webhook, device) with a try in flight, at most ``concurrencyPerWebhook`` per
    /// webhook and ``concurrency`` in all.
    static func startable(
        _ due: [ServiceStore.DueDelivery], inFlight: inout Set<DeviceKey>, perWebhook: inout [String: Int]
    ) -> [ServiceStore.DueDelivery] {
        var started: [ServiceStore.DueDelivery] = []
        for delivery in due where inFlight.count < concurrency {
            let key = DeviceKey(webhook: delivery.webhook, device: delivery.device)
            guard perWebhook[delivery.webhook, default: 0] < concurrencyPerWebhook, inFlight.insert(key).inserted
            else { continue }
            perWebhook[delivery.webhook, default: 0] += 1
            started.append(delivery)
        }
        return started
    }

    struct DeviceKey: Hashable, Sendable {
        var webhook: String
        var device: String
    }

    /// One try of one event, its outcome recorded in the store.
    private func deliver(_ delivery: ServiceStore.DueDelivery, with client: HTTPClient) async {
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "fenceline")
        request.headers.add(name: "Fenceline-Event-Id", value: "\(delivery.seq)")
        request.headers.add(
            name: "Fenceline-Signature", value: Self.signature(of: delivery.json, secret: delivery.secret))
        request.body = .bytes(ByteBuffer(bytes: delivery.json))
        var answered = false
        do {
            let response = try await client.execute(request, timeout: answerTimeout)
            answered = (200..<300).contains(response.status.code)
            _ = try? await response.body.collect(upTo: 1 << 16)
            if !answered { logger.debug("webhook answered \(response.status.code)", metadata: meta(delivery)) }
        } catch {
            logger.debug("webhook delivery failed", metadata: meta(delivery).merging(["error": "\(error)"]) { $1 })
        }
        let now = Date().timeIntervalSince1970
        let outcome: ServiceStore.DeliveryOutcome =
            if answered {
                .delivered
            } else if now - delivery.created >= ServiceStore.retryPeriod {
                .givenUp
            } else {
                .retry(next: now + Self.backoff(afterAttempts: delivery.attempts))
            }
        do {
            try store.record(outcome, of: delivery)
        } catch {
            logger.error("recording a webhook delivery failed", metadata: ["error": "\(error)"])
            return
        }
        switch outcome {
        case .delivered: metrics.webhookDeliveries.increment()
        case .retry: metrics.webhookFailures.increment()
        case .givenUp:
            metrics.webhookFailures.increment()
            metrics.webhookGivenUp.increment()
            logger.warning("gave up a webhook delivery after 24 h", metadata: meta(delivery))
        }
    }

    private func meta(_ delivery: ServiceStore.DueDelivery) -> Logger.Metadata {
        ["webhook": "\(delivery.webhook)", "seq": "\(delivery.seq)"]
    }

    /// Seconds before the next try: 1 s after the first failure, doubling, at most 5 min.
    static func backoff(afterAttempts attempts: Int) -> Double {
        min(Double(1 << min(attempts, 20)), longestBackoff)
    }

    /// `sha256=<hex HMAC-SHA256 of body under secret>`, as `Fenceline-Signature` carries it.
    static func signature(of body: [UInt8], secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8)))
        return "sha256=" + code.map { String(format: "%02x", $0) }.joined()
    }
}
