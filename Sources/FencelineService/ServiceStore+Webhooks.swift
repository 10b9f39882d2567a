import Foundation
import GRDB

extension ServiceStore {
    /// The due time of an outbox row behind its device's oldest one: it becomes due when that
    /// one leaves (``record(_:of:)``).
    static let notDue = 1e18

    /// How long an event is retried before it is given up (SPEC §11: 24 h).
    static let retryPeriod = 24 * 3600.0

    /// A webhook as stored: where events go, the secret that signs them, its filters and counts.
    struct Webhook: Codable, Sendable, Equatable {
        var id: String
        var url: String
        var secret: String
        /// Only events of these requests, or every request.
        var requests: [String]?
        /// Only events of these kinds, or every kind.
        var events: [String]?
        var created: Double
        var delivered = 0
        var failed = 0
        var givenUp = 0
        /// Events waiting for delivery.
        var backlog = 0

        /// Whether an event of `kind` from request `request` goes to this webhook.
        func matches(kind: String, request: String) -> Bool {
            (requests?.contains(request) ?? true) && (events?.contains(kind) ?? true)
        }
    }

    func addWebhook(_ webhook: Webhook) throws {
        try pool.write { db in
            try db.execute(
                sql: "INSERT INTO webhooks (id, url, secret, requests, events, created) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    webhook.id, webhook.url, webhook.secret, try webhook.requests.map { try JSONEncoder().encode($0) },
                    try webhook.events.map { try JSONEncoder().encode($0) }, webhook.created,
                ])
        }
    }

    /// Removes a webhook and its undelivered events; `false` when there was none.
    func removeWebhook(id: String) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM outbox WHERE webhook = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM webhooks WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// Every webhook, oldest first, with its counts and backlog.
    func webhooks() throws -> [Webhook] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT w.*, (SELECT COUNT(*) FROM outbox o WHERE o.webhook = w.id) AS backlog
                    FROM webhooks w ORDER BY created, id
                    """
            ).map { row in
                let decoder = JSONDecoder()
                return Webhook(
                    id: row["id"], url: row["url"], secret: row["secret"],
                    requests: try (row["requests"] as Data?).map { try decoder.decode([String].self, from: $0) },
                    events: try (row["events"] as Data?).map { try decoder.decode([String].self, from: $0) },
                    created: row["created"], delivered: row["delivered"], failed: row["failed"],
                    givenUp: row["givenUp"], backlog: row["backlog"])
            }
        }
    }

    /// One event due for a webhook: the first undelivered one of its device, so that deliveries
    /// to a webhook keep `seq` order per device.
    struct DueDelivery: Sendable, Hashable {
        var webhook: String
        var url: String
        var secret: String
        var seq: Int
        var device: String
        var attempts: Int
        var created: Double
        var json: [UInt8]
    }

    /// Up to `limit` deliveries due at `now` for each webhook, longest due first: only each
    /// (webhook, device)'s oldest row is ever due, and a webhook with a long backlog cannot hide
    /// the others' due rows.
    func dueDeliveries(now: Double, limitPerWebhook limit: Int) throws -> [DueDelivery] {
        try pool.read { db in
            var due: [DueDelivery] = []
            // Asked every few milliseconds while deliveries run: the statements are compiled once.
            let webhooks = try db.cachedStatement(sql: "SELECT id, url, secret FROM webhooks ORDER BY created, id")
            let rows = try db.cachedStatement(
                sql: """
                    SELECT o.seq, o.device, o.attempts, o.created, e.json
                    FROM outbox o JOIN events e ON e.seq = o.seq
                    WHERE o.webhook = ? AND o.nextAttempt <= ?
                    ORDER BY o.nextAttempt, o.seq LIMIT ?
                    """)
            for webhook in try Row.fetchAll(webhooks) {
                let id: String = webhook["id"]
                due += try Row.fetchAll(rows, arguments: [id, now, limit]).map { row in
                    DueDelivery(
                        webhook: id, url: webhook["url"], secret: webhook["secret"], seq: row["seq"],
                        device: row["device"], attempts: row["attempts"], created: row["created"],
                        json: Array(row["json"] as Data))
                }
            }
            return due
        }
    }

    /// What became of one try.
    enum DeliveryOutcome: Sendable {
        /// A 2xx answer: the event is delivered.
        case delivered
        /// Tried again at `next`.
        case retry(next: Double)
        /// Past its 24 hours of retries.
        case givenUp

        /// What the outcome adds to a webhook's counts (the store's and the metrics'): a given-up
        /// event is a failure too.
        var tally: (delivered: Int, failed: Int, givenUp: Int) {
            switch self {
            case .delivered: (1, 0, 0)
            case .retry: (0, 1, 0)
            case .givenUp: (0, 1, 1)
            }
        }
    }

    /// Records a try's outcome: a delivered or given-up event leaves the outbox, and its
    /// device's next one becomes due.
    func record(_ outcome: DeliveryOutcome, of delivery: DueDelivery) throws {
        try record([(outcome, delivery)])
    }

    /// Records the outcomes of several tries in one transaction: the delivery loop gathers the
    /// tries that end close together, so that its writes (each a sync to disk) stay few and
    /// leave the writer to ingest.
    func record(_ outcomes: [(outcome: DeliveryOutcome, delivery: DueDelivery)]) throws {
        guard !outcomes.isEmpty else { return }
        try pool.write { db in
            let remove = try db.cachedStatement(sql: "DELETE FROM outbox WHERE webhook = ? AND seq = ?")
            let retry = try db.cachedStatement(
                sql: "UPDATE outbox SET attempts = attempts + 1, nextAttempt = ? WHERE webhook = ? AND seq = ?")
            let count = try db.cachedStatement(
                sql: """
                    UPDATE webhooks SET delivered = delivered + ?, failed = failed + ?, givenUp = givenUp + ?
                    WHERE id = ?
                    """)
            for (outcome, delivery) in outcomes {
                let key: StatementArguments = [delivery.webhook, delivery.seq]
                // A row given up meanwhile (expired, pruned, its webhook removed) is counted no more.
                switch outcome {
                case .delivered, .givenUp: try remove.execute(arguments: key)
                case .retry(let next): try retry.execute(arguments: [next] + key)
                }
                guard db.changesCount > 0 else { continue }
                let tally = outcome.tally
                try count.execute(arguments: [tally.delivered, tally.failed, tally.givenUp, delivery.webhook])
                if case .retry = outcome { continue }
                try Self.makeNextDue(webhook: delivery.webhook, device: delivery.device, db: db)
            }
        }
    }

    /// Makes the oldest row of (webhook, device), if any, due now.
    private static func makeNextDue(webhook: String, device: String, db: Database) throws {
        try db.cachedStatement(
            sql: """
                UPDATE outbox SET nextAttempt = ?
                WHERE webhook = ? AND seq = (SELECT MIN(seq) FROM outbox WHERE webhook = ? AND device = ?)
                """
        ).execute(arguments: [Date().timeIntervalSince1970, webhook, webhook, device])
    }

    /// Gives up every event committed more than 24 h before `now`, whatever its place in its
    /// device's queue (behind a receiver that never answers they would otherwise wait their turn
    /// for ever), counting them per webhook; returns how many.
    func expireDeliveries(now: Double) throws -> Int {
        try pool.write { db in try Self.giveUp(db, where: "created < ?", [now - Self.retryPeriod]) }
    }

    /// Gives up the outbox rows that `condition` selects, counting them per webhook, and makes
    /// the oldest row left of each device whose queue lost its head due now; returns how many.
    static func giveUp(_ db: Database, where condition: String, _ arguments: StatementArguments) throws -> Int {
        let given = try Row.fetchAll(
            db, sql: "SELECT webhook, device, COUNT(*) AS n FROM outbox WHERE \(condition) GROUP BY webhook, device",
            arguments: arguments)
        guard !given.isEmpty else { return 0 }
        try db.execute(sql: "DELETE FROM outbox WHERE \(condition)", arguments: arguments)
        var total = 0
        for row in given {
            let count: Int = row["n"]
            total += count
            try db.execute(
                sql: "UPDATE webhooks SET failed = failed + ?, givenUp = givenUp + ? WHERE id = ?",
                arguments: [count, count, row["webhook"] as String])
            let head = try Double.fetchOne(
                db, sql: "SELECT MIN(nextAttempt) FROM outbox WHERE webhook = ? AND device = ?",
                arguments: [row["webhook"] as String, row["device"] as String])
            if let head, head >= Self.notDue {
                try Self.makeNextDue(webhook: row["webhook"], device: row["device"], db: db)
            }
        }
        return total
    }

    /// Events waiting for delivery, over every webhook.
    func outboxCount() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? 0 }
    }
}
