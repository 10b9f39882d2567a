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

    static let answerTimeout = TimeAmount.seconds(10)
    static let retryPeriod = 24 * 3600.0
    static let longestBackoff = 300.0
    static let drainPeriod = Duration.seconds(10)
    /// Deliveries tried at once.
    static let concurrency = 32

    func run() async throws {
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                redirectConfiguration: .disallow,
                timeout: .init(connect: Self.answerTimeout, read: Self.answerTimeout)))
        // Each (webhook, device) has at most one try in flight; a slow receiver holds only its own.
        await withTaskGroup(of: DeviceKey?.self) { group in
            var inFlight: Set<DeviceKey> = []
            var drainEnd: ContinuousClock.Instant?
            var sleeping = false
            while !Task.isCancelled {
                if drainEnd == nil && Task.isShuttingDownGracefully { drainEnd = .now + Self.drainPeriod }
                if let drainEnd, ContinuousClock.now >= drainEnd { break }
                var due: [ServiceStore.DueDelivery] = []
                do {
                    due = try store.dueDeliveries(
                        now: Date().timeIntervalSince1970, limit: Self.concurrency + inFlight.count)
                    metrics.webhookBacklog.record(try store.outboxCount())
                } catch {
                    logger.error("reading the webhook outbox failed", metadata: ["error": "\(error)"])
                }
                for delivery in due where inFlight.count < Self.concurrency {
                    let key = DeviceKey(webhook: delivery.webhook, device: delivery.device)
                    guard inFlight.insert(key).inserted else { continue }
                    group.addTask {
                        await deliver(delivery, with: client)
                        return key
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
                case .some(.some(let finished)): inFlight.remove(finished)
                case .some(.none): sleeping = false
                case .none: break
                }
            }
            group.cancelAll()
        }
        try? await client.shutdown()
    }

    private struct DeviceKey: Hashable, Sendable {
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
            let response = try await client.execute(request, timeout: Self.answerTimeout)
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
            } else if now - delivery.created >= Self.retryPeriod {
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
