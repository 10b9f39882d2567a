import Fenceline
import Foundation
import GRDB
import TestSupport
import Testing

@testable import FencelineService

/// The webhook outbox on a real store (SQLite in a temporary directory) and the delivery loop's
/// rules: only a device's oldest event is due, retries back off, 24 h gives up, and no receiver
/// gets more than its share of concurrent tries.
@Suite struct WebhookOutboxTests {
    static func store() throws -> ServiceStore {
        let directory = Scratch.root.appendingPathComponent("outbox-\(UUID().uuidString)")
        return try ServiceStore(directory: directory.path)
    }

    static func webhook(_ id: String) -> ServiceStore.Webhook {
        ServiceStore.Webhook(
            id: id, url: "http://127.0.0.1:9/", secret: "s", requests: nil, events: nil,
            created: Date().timeIntervalSince1970)
    }

    /// One batch of events, each queued for webhook `w`.
    static func batch(_ events: [(seq: Int, device: String)]) -> ServiceStore.Batch {
        ServiceStore.Batch(
            lines: [Array("{}".utf8)],
            events: events.map {
                .init(
                    seq: $0.seq, kind: "enter", device: $0.device, request: "r", json: Array("{\"seq\":\($0.seq)}".utf8)
                )
            },
            deliveries: events.map { .init(webhook: "w", seq: $0.seq, device: $0.device) }, idempotency: nil)
    }

    /// Commits one event per (seq, device), each queued for webhook `w`.
    static func commit(_ events: [(seq: Int, device: String)], to store: ServiceStore) throws {
        try store.commit([batch(events)])
    }

    @Test func theBackoffDoublesFromOneSecondToFiveMinutes() {
        let delays = (0...12).map { WebhookDelivery.backoff(afterAttempts: $0) }
        #expect(delays == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300, 300])
        #expect(WebhookDelivery.backoff(afterAttempts: 1_000_000) == 300)
    }

    @Test func onlyEachDevicesOldestEventIsDueAndRetriesWait() throws {
        let store = try Self.store()
        try store.addWebhook(Self.webhook("w"))
        try Self.commit([(1, "a"), (2, "a"), (3, "b"), (4, "a")], to: store)
        let now = Date().timeIntervalSince1970 + 1
        var due = try store.dueDeliveries(now: now, limitPerWebhook: 16)
        #expect(due.map(\.seq) == [1, 3])
        let first = try #require(due.first)
        try store.record(.retry(next: now + WebhookDelivery.backoff(afterAttempts: first.attempts)), of: first)
        due = try store.dueDeliveries(now: now, limitPerWebhook: 16)
        #expect(due.map(\.seq) == [3], "a's head waits for its retry; its next events wait behind it")
        due = try store.dueDeliveries(now: now + 1, limitPerWebhook: 16)
        #expect(due.map(\.seq).sorted() == [1, 3])
        let retried = try #require(due.first { $0.seq == 1 })
        #expect(retried.attempts == 1)
        try store.record(.delivered, of: retried)
        due = try store.dueDeliveries(now: now + 1, limitPerWebhook: 16)
        #expect(due.map(\.seq).sorted() == [2, 3], "a's next event is due once its head is delivered")
        #expect(try store.webhooks().first?.delivered == 1)
        #expect(try store.webhooks().first?.failed == 1)
    }

    /// A device's later events wait behind its first whether they come in the same batch, another
    /// batch of the same group commit or a later commit; and outcomes recorded together (the
    /// delivery loop's one write for the tries that ended close together) do what each does alone.
    @Test func queuesHoldAcrossCommitsAndOutcomesRecordTogether() throws {
        let store = try Self.store()
        try store.addWebhook(Self.webhook("w"))
        try store.commit([Self.batch([(1, "a")]), Self.batch([(2, "a"), (3, "b")])])
        try store.commit([Self.batch([(4, "c"), (5, "b")])])
        let now = Date().timeIntervalSince1970 + 1
        let due = try store.dueDeliveries(now: now, limitPerWebhook: 16)
        #expect(due.map(\.seq).sorted() == [1, 3, 4])
        let bySeq = Dictionary(uniqueKeysWithValues: due.map { ($0.seq, $0) })
        try store.record([
            (.delivered, try #require(bySeq[1])), (.retry(next: now + 10), try #require(bySeq[3])),
            (.givenUp, try #require(bySeq[4])),
        ])
        #expect(try store.dueDeliveries(now: now + 1, limitPerWebhook: 16).map(\.seq) == [2])
        #expect(try store.dueDeliveries(now: now + 11, limitPerWebhook: 16).map(\.seq).sorted() == [2, 3])
        let counts = try #require(try store.webhooks().first)
        #expect(counts.delivered == 1 && counts.failed == 2 && counts.givenUp == 1 && counts.backlog == 3)
    }

    @Test func eventsAreGivenUpAfterADayWhereverTheyWait() throws {
        let store = try Self.store()
        try store.addWebhook(Self.webhook("w"))
        try Self.commit([(1, "a"), (2, "a"), (3, "a"), (4, "b")], to: store)
        let now = Date().timeIntervalSince1970
        #expect(try store.expireDeliveries(now: now + 3600) == 0)
        // The head of a's queue was committed 25 h ago: it alone is given up, and a's next is due.
        try store.pool.write { db in
            try db.execute(sql: "UPDATE outbox SET created = ? WHERE seq = 1", arguments: [now - 25 * 3600])
        }
        #expect(try store.expireDeliveries(now: now) == 1)
        #expect(try store.dueDeliveries(now: now + 1, limitPerWebhook: 16).map(\.seq).sorted() == [2, 4])
        let counts = try #require(try store.webhooks().first)
        #expect(counts.givenUp == 1 && counts.failed == 1 && counts.backlog == 3)
        // A day after the rest were committed, they go too, queued behind others or not.
        let inFlight = try #require(try store.dueDeliveries(now: now + 1, limitPerWebhook: 16).first)
        #expect(try store.expireDeliveries(now: now + ServiceStore.retryPeriod + 1) == 3)
        #expect(try store.outboxCount() == 0)
        #expect(try store.webhooks().first?.givenUp == 4)
        // A try that ends after its row was given up counts no more.
        try store.record(.delivered, of: inFlight)
        #expect(try store.webhooks().first?.delivered == 0)
    }

    /// Migration 3 reads the last seq of the checkpoints a store already kept from their states,
    /// so that a prune to one of them drops exactly the events it covers.
    @Test func checkpointsFromBeforeRetentionKnowTheirLastSeq() throws {
        let directory = Scratch.root.appendingPathComponent("migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let gate = NotificationRequest(
            id: "gate", content: NotificationContent(title: "Gate"),
            trigger: .region(
                RegionTrigger(
                    geometry: .circle(center: Coordinate(latitude: 52.37, longitude: 4.89), radius: 100),
                    hysteresis: .naive)))
        let engine = try Engine(catalog: Catalog(requests: [gate]))
        let start = Timestamp(rfc3339: "2026-03-02T08:00:00Z")!
        var events: [Event] = []
        for step in 0..<6 {
            events += engine.process(
                .fix(
                    Fix(
                        device: "d", time: start.advanced(by: TimeSpan(seconds: Double(step * 10))),
                        coordinate: Coordinate(latitude: step % 2 == 0 ? 52.37 : 52.38, longitude: 4.89))))
        }
        events += engine.advance(to: start.advanced(by: TimeSpan(seconds: 100)))
        #expect(events.count >= 3)
        do {
            let pool = try DatabasePool(path: directory.appendingPathComponent("fenceline.sqlite").path)
            try ServiceStore.migrator.migrate(pool, upTo: "2-webhooks-outbox")
            try pool.write { db in
                try db.execute(
                    sql: "INSERT INTO checkpoints (journalPosition, state, created) VALUES (7, ?, 0)",
                    arguments: [Data(engine.checkpoint())])
            }
        }
        let store = try ServiceStore(directory: directory.path)
        let lastSeq = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT lastSeq FROM checkpoints") }
        #expect(lastSeq == events.count)
    }

    @Test func theWebhooksSendingShareTheTriesEqually() {
        #expect((1...4).map(WebhookDelivery.share(among:)) == [8, 8, 8, 8])
        #expect([5, 8, 16, 32, 33, 100].map(WebhookDelivery.share(among:)) == [6, 4, 2, 1, 1, 1])
    }

    @Test func concurrentTriesAreCappedPerWebhookAndPerDevice() {
        func due(_ webhook: String, _ device: String, _ seq: Int) -> ServiceStore.DueDelivery {
            .init(
                webhook: webhook, url: "http://127.0.0.1:9/", secret: "s", seq: seq, device: device, attempts: 0,
                created: 0, json: [])
        }
        let slow = (0..<20).map { due("slow", "d\($0)", $0) }
        let twice = [due("other", "x", 100), due("other", "x", 101)]
        var inFlight: Set<WebhookDelivery.DeviceKey> = []
        var perWebhook: [String: Int] = [:]
        let started = WebhookDelivery.startable(slow + twice, inFlight: &inFlight, perWebhook: &perWebhook)
        #expect(started.filter { $0.webhook == "slow" }.count == WebhookDelivery.concurrencyPerWebhook)
        #expect(started.filter { $0.webhook == "other" }.map(\.seq) == [100], "one try per device at a time")
        // Nothing more starts for them until a try ends.
        #expect(WebhookDelivery.startable(slow + twice, inFlight: &inFlight, perWebhook: &perWebhook).isEmpty)
        // Ten more webhooks with events: twelve send, each gets its share of 32 (2), and the
        // slow one's eight tries, started when its share was larger, hold no one else up.
        let many = (0..<10).flatMap { webhook in (0..<5).map { due("w\(webhook)", "d\($0)", 200 + webhook * 5 + $0) } }
        let more = WebhookDelivery.startable(slow + twice + many, inFlight: &inFlight, perWebhook: &perWebhook)
        #expect(more.count == 10 * 2 && Set(more.map(\.webhook)).count == 10)
        inFlight.remove(.init(webhook: "slow", device: "d0"))
        inFlight.remove(.init(webhook: "other", device: "x"))
        perWebhook["slow", default: 1] -= 1
        perWebhook["other", default: 1] -= 1
        // 100 was delivered: x's next event goes, and the slow one, still over its share, waits.
        let next = WebhookDelivery.startable(slow + [twice[1]] + many, inFlight: &inFlight, perWebhook: &perWebhook)
        #expect(next.map(\.seq) == [101])
    }
}
