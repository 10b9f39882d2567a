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
    /// Deliveries tried at once: the webhooks with events to send share ``concurrency`` equally,
    /// each at most ``concurrencyPerWebhook`` and at least one (``share(among:)``), so receivers
    /// that stall, however many, hold only their own shares.
    static let concurrency = 32
    static let concurrencyPerWebhook = 8

    /// The tries one webhook may have in flight while `webhooks` have events to send.
    static func share(among webhooks: Int) -> Int {
        max(1, min(concurrencyPerWebhook, concurrency / max(webhooks, 1)))
    }

    func run() async throws {
        // The shares bound the tries, not the pool: several webhooks often share a receiver, and
        // one stalled path must not queue the others behind its connections (a share shrinks as
        // webhooks join, while tries started under the larger one still hang).
        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: Self.concurrency * Self.concurrencyPerWebhook)
        // A refused connection is a failed try, retried on the webhook's own backoff: the client's
        // retries would hold the try (and its share of the webhook's tries) for the whole 10 s.
        pool.retryConnectionEstablishment = false
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                redirectConfiguration: .disallow, timeout: .init(connect: answerTimeout, read: answerTimeout),
                connectionPool: pool))
        // Each (webhook, device) has at most one try in flight, so its events go in seq order.
        await withTaskGroup(of: Woken.self) { group in
            var inFlight: Set<DeviceKey> = []
            var perWebhook: [String: Int] = [:]
            var ended: [Ended] = []
            var drainEnd: ContinuousClock.Instant?
            // The pending sleepers: one of a tenth of a second, and one of the gathering period
            // started when a try ends.
            var longPause = false
            var shortPause = false
            var lastExpiry = ContinuousClock.now - .seconds(3600)
            while !Task.isCancelled {
                if drainEnd == nil && Task.isShuttingDownGracefully { drainEnd = .now + Self.drainPeriod }
                if let drainEnd, ContinuousClock.now >= drainEnd { break }
                record(&ended, inFlight: &inFlight, perWebhook: &perWebhook)
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
                    group.addTask { .ended(Ended(delivery: delivery, outcome: await send(delivery, with: client))) }
                }
                // Nothing in flight and nothing due: drained.
                if inFlight.isEmpty && drainEnd != nil { break }
                // Wait until every try in flight has ended, or a few milliseconds after the first
                // one did (those that end meanwhile are recorded in one write, not one each), or a
                // tenth of a second (to look for newly committed events and due retries).
                waiting: while true {
                    if !longPause {
                        longPause = true
                        group.addTask {
                            try? await Task.sleep(for: .milliseconds(100))
                            return .pause(short: false)
                        }
                    }
                    switch await group.next() {
                    case .ended(let attempt)?:
                        ended.append(attempt)
                        if ended.count == inFlight.count { break waiting }
                        if !shortPause {
                            shortPause = true
                            group.addTask {
                                try? await Task.sleep(for: Self.gatheringPeriod)
                                return .pause(short: true)
                            }
                        }
                    case .pause(let short)?:
                        if short { shortPause = false } else { longPause = false }
                        break waiting
                    case nil: break waiting
                    }
                }
            }
            // What ended but was not recorded yet is not tried again after a restart.
            record(&ended, inFlight: &inFlight, perWebhook: &perWebhook)
            group.cancelAll()
        }
        try? await client.shutdown()
    }

    /// How long the loop waits, once a try has ended while others are in flight, before it
    /// records those that have ended and starts the next: the store sees a write per period
    /// rather than one per try.
    static let gatheringPeriod = Duration.milliseconds(10)

    /// A try that has ended, and what became of it.
    struct Ended: Sendable {
        var delivery: ServiceStore.DueDelivery
        var outcome: ServiceStore.DeliveryOutcome
    }

    /// What wakes the loop: a try that ended, or one of its sleepers.
    enum Woken: Sendable {
        case ended(Ended)
        case pause(short: Bool)
    }

    /// Records the outcomes of `ended` in the store (one write) and counts them, then frees their
    /// devices for their next events.
    private func record(_ ended: inout [Ended], inFlight: inout Set<DeviceKey>, perWebhook: inout [String: Int]) {
        guard !ended.isEmpty else { return }
        defer {
            for attempt in ended {
                inFlight.remove(DeviceKey(webhook: attempt.delivery.webhook, device: attempt.delivery.device))
                perWebhook[attempt.delivery.webhook, default: 1] -= 1
            }
            ended = []
        }
        do {
            try store.record(ended.map { ($0.outcome, $0.delivery) })
        } catch {
            // Their rows stay as they were: tried again, as receivers must expect (at least once).
            logger.error("recording webhook deliveries failed", metadata: ["error": "\(error)"])
            return
        }
        for attempt in ended {
            let tally = attempt.outcome.tally
            metrics.webhookDeliveries.increment(by: tally.delivered)
            metrics.webhookFailures.increment(by: tally.failed)
            metrics.webhookGivenUp.increment(by: tally.givenUp)
            if tally.givenUp > 0 {
                logger.warning("gave up a webhook delivery after 24 h", metadata: meta(attempt.delivery))
            }
        }
    }

    /// The deliveries of `due` to start now, in order, counted into `inFlight` and `perWebhook`:
    /// none of a (webhook, device) with a try in flight, and no more for a webhook than its share
    /// among those with a try in flight or one due.
    static func startable(
        _ due: [ServiceStore.DueDelivery], inFlight: inout Set<DeviceKey>, perWebhook: inout [String: Int]
    ) -> [ServiceStore.DueDelivery] {
        var sending = Set(due.map(\.webhook))
        for (webhook, tries) in perWebhook where tries > 0 { sending.insert(webhook) }
        let share = share(among: sending.count)
        var started: [ServiceStore.DueDelivery] = []
        for delivery in due {
            let key = DeviceKey(webhook: delivery.webhook, device: delivery.device)
            guard perWebhook[delivery.webhook, default: 0] < share, inFlight.insert(key).inserted else { continue }
            perWebhook[delivery.webhook, default: 0] += 1
            started.append(delivery)
        }
        return started
    }

    struct DeviceKey: Hashable, Sendable {
        var webhook: String
        var device: String
    }

    /// One try of one event, and what became of it (recorded by the loop, with others).
    private func send(_ delivery: ServiceStore.DueDelivery, with client: HTTPClient) async
        -> ServiceStore.DeliveryOutcome
    {
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
        if answered { return .delivered }
        if now - delivery.created >= ServiceStore.retryPeriod { return .givenUp }
        return .retry(next: now + Self.backoff(afterAttempts: delivery.attempts))
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
        return "sha256=" + lowercaseHex(code)
    }
}
