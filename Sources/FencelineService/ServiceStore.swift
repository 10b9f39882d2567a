import Fenceline
import FencelineRun
import Foundation
import GRDB

/// The service's state on disk (SPEC §11): SQLite in WAL mode with an fsync on every commit,
/// through GRDB, in `DIR/fenceline.sqlite`. It holds the journal of every line the engine applied
/// (a row per batch, its lines joined by newlines), the event log, the engine checkpoints (each
/// with the journal position it covers, its state in a file of `DIR/checkpoints`), idempotency
/// answers and settings. Its schema is created and upgraded by numbered migrations.
final class ServiceStore: Sendable {
    let pool: DatabasePool
    /// A connection of its own for copying the WAL into the database (``checkpointWAL()``), so
    /// that the copy runs while the writer goes on committing: on the writer's connection, the
    /// next group commit waited for it, a few milliseconds every megabyte.
    private let checkpointer: DatabaseQueue
    /// Where checkpoint states are kept, a file each (`DIR/checkpoints`): written beside the
    /// database, a large state does not hold SQLite's one writer while group commits wait.
    let checkpointDirectory: String

    /// Opens (creating and migrating as needed) the store in `directory`.
    init(directory: String) throws {
        // The store holds the token (when generated) and every device's track: a new directory
        // and database are the owner's alone (SQLite gives its WAL files the database's mode).
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        if !files.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
            try files.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let database = directory + "/fenceline.sqlite"
        if !files.fileExists(atPath: database) {
            _ = files.createFile(atPath: database, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        var configuration = Configuration()
        // SQLite's own WAL checkpoint runs inside the commit that crosses its threshold, so that
        // one batch waits for it; the engine copies the WAL every megabyte on another connection
        // while commits go on (``checkpointWAL()``) and finishes those copies between groups, and
        // the automatic one, set higher, is the backstop for writes outside the engine's groups.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.automaticCheckpointPages)")
        }
        pool = try DatabasePool(path: database, configuration: configuration)
        // A 200 answer promises the batch is on disk: every commit is fsynced, not only the WAL's
        // checkpoints. Set on the writer after the pool is open, since GRDB sets NORMAL (the WAL
        // default) when it turns the WAL on, after `prepareDatabase`.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        // Opened after the pool has turned the WAL on; it only ever checkpoints. FULL, so that the
        // database file is synced before the WAL is started over.
        var checkpointing = Configuration()
        checkpointing.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        checkpointer = try DatabaseQueue(path: database, configuration: checkpointing)
        checkpointDirectory = directory + "/checkpoints"
        try FileManager.default.createDirectory(atPath: checkpointDirectory, withIntermediateDirectories: true)
        try Self.migrator.migrate(pool)
        try removeUnlistedCheckpointFiles()
    }

    /// Files a crash left in the checkpoint directory: a state written but never listed (killed
    /// before its row was committed), one dropped but not yet deleted, a temporary file.
    private func removeUnlistedCheckpointFiles() throws {
        let listed = try pool.read { db in
            Set(try String.fetchAll(db, sql: "SELECT file FROM checkpoints WHERE file IS NOT NULL"))
                .union(try String.fetchAll(db, sql: "SELECT requests FROM checkpoints WHERE requests IS NOT NULL"))
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: checkpointDirectory)
        where !listed.contains(name) {
            try? FileManager.default.removeItem(atPath: "\(checkpointDirectory)/\(name)")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1-journal-events-checkpoints") { db in
            try db.create(table: "meta") { table in
                table.primaryKey("key", .text)
                table.column("value", .blob).notNull()
            }
            try db.create(table: "journal") { table in
                table.autoIncrementedPrimaryKey("position")
                table.column("line", .blob).notNull()
            }
            try db.create(table: "events") { table in
                table.primaryKey("seq", .integer)
                table.column("kind", .text).notNull()
                table.column("device", .text)
                table.column("request", .text).notNull()
                table.column("json", .blob).notNull()
            }
            try db.create(table: "checkpoints") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("journalPosition", .integer).notNull()
                table.column("state", .blob).notNull()
                table.column("created", .double).notNull()
            }
            try db.create(table: "idempotency") { table in
                table.primaryKey("key", .text)
                table.column("answer", .blob).notNull()
                table.column("created", .double).notNull()
            }
        }
        // Webhooks and their outbox: each matching event gets a row in the batch's own commit,
        // so a restart resumes delivery with nothing lost.
        migrator.registerMigration("2-webhooks-outbox") { db in
            try db.create(table: "webhooks") { table in
                table.primaryKey("id", .text)
                table.column("url", .text).notNull()
                table.column("secret", .text).notNull()
                table.column("requests", .blob)
                table.column("events", .blob)
                table.column("created", .double).notNull()
                table.column("delivered", .integer).notNull().defaults(to: 0)
                table.column("failed", .integer).notNull().defaults(to: 0)
                table.column("givenUp", .integer).notNull().defaults(to: 0)
            }
            try db.create(table: "outbox") { table in
                table.column("webhook", .text).notNull()
                table.column("seq", .integer).notNull()
                table.column("device", .text).notNull()
                table.column("attempts", .integer).notNull().defaults(to: 0)
                table.column("nextAttempt", .double).notNull()
                table.column("created", .double).notNull()
                table.primaryKey(["webhook", "seq"])
            }
            try db.create(index: "outboxByDevice", on: "outbox", columns: ["webhook", "device", "seq"])
            // Only each device's oldest row has a real due time (the rest wait at `notDue`), so
            // finding what is due reads this index, not the whole outbox.
            try db.create(index: "outboxByDue", on: "outbox", columns: ["webhook", "nextAttempt", "seq"])
            // `GET /v1/devices/{id}` reads a device's last enter or exit per request.
            try db.create(index: "eventsByDevice", on: "events", columns: ["device", "request", "seq"])
        }
        // Retention (`--retention`): each checkpoint notes the last event it covers, and the one
        // the journal and the log were pruned to is kept as the export's base.
        migrator.registerMigration("3-retention") { db in
            try db.alter(table: "checkpoints") { table in
                table.add(column: "lastSeq", .integer).notNull().defaults(to: 0)
                table.add(column: "base", .boolean).notNull().defaults(to: false)
            }
            // Checkpoints kept from before: their last seq is read from the state's summary.
            for row in try Row.fetchAll(db, sql: "SELECT id, state FROM checkpoints") {
                let state = Array(row["state"] as Data)
                guard let summary = try? Engine.checkpointSummary(of: state) else { continue }
                try db.execute(
                    sql: "UPDATE checkpoints SET lastSeq = ? WHERE id = ?",
                    arguments: [summary.nextSequence - 1, row["id"] as Int64])
            }
        }
        // Checkpoint states in files of their own (`file`); those kept from before stay in `state`.
        migrator.registerMigration("4-checkpoint-files") { db in
            try db.alter(table: "checkpoints") { table in table.add(column: "file", .text) }
        }
        // A checkpoint's request encodings in a table file shared by those that follow
        // (`requests`, see ServiceCheckpointFile); those kept from before hold their own.
        migrator.registerMigration("5-request-tables") { db in
            try db.alter(table: "checkpoints") { table in table.add(column: "requests", .text) }
        }
        return migrator
    }

    /// One event as the log keeps it.
    struct LoggedEvent: Sendable {
        var seq: Int
        var kind: String
        var device: String?
        var request: String
        var json: [UInt8]
    }

    /// An event one webhook is to be sent.
    struct Delivery: Sendable {
        var webhook: String
        var seq: Int
        var device: String?
    }

    /// One batch's share of a commit: the lines applied, the events they released, their webhook
    /// deliveries and, under an idempotency key, the answer given.
    struct Batch: Sendable {
        /// The lines applied, joined by newlines: the journal keeps a batch in one row, since a
        /// row per line cost about as much as applying the lines. Empty for none.
        var journal: [UInt8]
        var events: [LoggedEvent]
        var deliveries: [Delivery] = []
        var idempotency: (key: String, answer: [UInt8])?

        init(
            journal: [UInt8], events: [LoggedEvent], deliveries: [Delivery] = [],
            idempotency: (key: String, answer: [UInt8])?
        ) {
            self.journal = journal
            self.events = events
            self.deliveries = deliveries
            self.idempotency = idempotency
        }

        init(
            lines: [[UInt8]], events: [LoggedEvent], deliveries: [Delivery] = [],
            idempotency: (key: String, answer: [UInt8])?
        ) {
            self.init(
                journal: Array(lines.joined(separator: [0x0A])), events: events, deliveries: deliveries,
                idempotency: idempotency)
        }
    }

    /// Commits a batch at once. Returns the journal position of the batch's row.
    @discardableResult
    func commit(
        lines: [[UInt8]], events: [LoggedEvent], deliveries: [Delivery] = [],
        idempotency: (key: String, answer: [UInt8])?
    ) throws -> Int {
        try commit([Batch(lines: lines, events: events, deliveries: deliveries, idempotency: idempotency)])
    }

    /// The WAL pages past which SQLite checkpoints by itself (4 KiB each: 16 MiB).
    static let automaticCheckpointPages = 4096

    /// The WAL pages (3 MiB) past which a copy racing commits is finished on the writer, so that
    /// the WAL starts over: the copies alone, each racing the next commits, leave that to chance.
    static let restartPages = 768

    /// Copies what the WAL holds into the database without waiting for readers or the writer, on
    /// a connection of its own (GRDB's readers are read-only and cannot checkpoint), while commits
    /// go on: the frames committed meanwhile wait for the next copy. The WAL is started over by a
    /// write that finds every frame copied, which a steady stream of commits seldom leaves.
    /// Returns whether the WAL holds more than ``restartPages`` frames: it has not started over
    /// for a while (each copy raced commits), and the few frames this copy left should be copied
    /// on the writer's connection, between groups, where nothing races it.
    ///
    /// Asynchronous (GRDB runs it on the connection's own queue), so the copy does not hold one
    /// of the few threads of Swift's shared pool while it syncs. A copy that finds the other
    /// copy (the writer's automatic one) running is no failure: it is skipped.
    func checkpointWAL() async throws -> Bool {
        do {
            let (frames, _) = try await checkpointer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
            return frames > Self.restartPages
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            return false
        }
    }

    /// Copies the WAL into the database on the writer's connection, between groups: no commit
    /// runs meanwhile, so every frame is copied and the next commit starts the WAL over, unless
    /// a reader still holds an older snapshot (an event page being read), when the next copy
    /// or SQLite's automatic one does.
    func checkpointWALOnWriter() async throws {
        try await pool.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
    }

    /// Commits batches in one transaction (one sync to disk for all: a group commit), in order.
    /// Returns the journal position of the last row.
    @discardableResult
    func commit(_ batches: [Batch]) throws -> Int {
        try pool.write { db in
            // The (webhook, device) pairs known to have an outbox row: a device's later events wait
            // behind its first, looked up once per commit rather than once per event.
            var queued: Set<WebhookDelivery.DeviceKey> = []
            for batch in batches { try Self.insert(batch, into: db, queued: &queued) }
            return try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(position), 0) FROM journal") ?? 0
        }
    }

    private static func insert(_ batch: Batch, into db: Database, queued: inout Set<WebhookDelivery.DeviceKey>) throws {
        // Prepared once per connection: a batch inserts a row per event and per delivery, and
        // compiling a statement costs more than running it.
        if !batch.journal.isEmpty {
            try db.cachedStatement(sql: "INSERT INTO journal (line) VALUES (?)").execute(arguments: [
                Data(batch.journal)
            ])
        }
        let log = try db.cachedStatement(
            sql: "INSERT INTO events (seq, kind, device, request, json) VALUES (?, ?, ?, ?, ?)")
        for event in batch.events {
            try log.execute(arguments: [event.seq, event.kind, event.device, event.request, Data(event.json)])
        }
        let now = Date().timeIntervalSince1970
        if !batch.deliveries.isEmpty {
            let exists = try db.cachedStatement(
                sql: "SELECT EXISTS (SELECT 1 FROM outbox WHERE webhook = ? AND device = ?)")
            let queue = try db.cachedStatement(
                sql: "INSERT INTO outbox (webhook, seq, device, nextAttempt, created) VALUES (?, ?, ?, ?, ?)")
            for delivery in batch.deliveries {
                let device = delivery.device ?? ""
                let behind =
                    try !queued.insert(.init(webhook: delivery.webhook, device: device)).inserted
                    || Bool.fetchOne(exists, arguments: [delivery.webhook, device]) ?? false
                try queue.execute(arguments: [delivery.webhook, delivery.seq, device, behind ? Self.notDue : now, now])
            }
        }
        if let idempotency = batch.idempotency {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO idempotency (key, answer, created) VALUES (?, ?, ?)")
                .execute(arguments: [idempotency.key, Data(idempotency.answer), now])
        }
    }

    /// The answer first given to a batch committed under `key`, if one was.
    func answer(forKey key: String) throws -> [UInt8]? {
        try pool.read { db in
            try Data.fetchOne(db, sql: "SELECT answer FROM idempotency WHERE key = ?", arguments: [key]).map {
                Array($0)
            }
        }
    }

    /// Forgets idempotency answers older than `age` seconds.
    func forgetAnswers(olderThan age: Double) throws {
        try pool.write { db in
            try db.execute(
                sql: "DELETE FROM idempotency WHERE created < ?", arguments: [Date().timeIntervalSince1970 - age])
        }
    }

    /// Keeps an engine state that covers the journal up to `position` and the event log up to
    /// `lastSeq`. Older states are dropped, but for the export's base and, when `spacing` is
    /// given (`--retention`), one every `spacing` seconds, from which a later prune can start.
    /// The state is written to its own file first and listed after; a crash between leaves a
    /// file that the next start deletes. With `table`, `state` is a ``ServiceCheckpointFile``
    /// state whose request encodings are in that table file, written first when it is new.
    func saveCheckpoint(
        _ state: [UInt8], table: RequestTable? = nil, journalPosition position: Int, lastSeq: Int,
        spacing: Double? = nil
    ) throws {
        let file = "\(UUID().uuidString).\(table == nil ? "ckpt" : "state")"
        var written: [String] = []
        let dropped: [String]
        do {
            if let table, let bytes = table.newBytes {
                try DurableFile.write(bytes, to: "\(checkpointDirectory)/\(table.file)")
                written.append(table.file)
            }
            try DurableFile.write(state, to: "\(checkpointDirectory)/\(file)")
            written.append(file)
            dropped = try pool.write { db in
                // A table kept from an earlier checkpoint must still be listed by one: a table
                // goes with the last checkpoint that uses it.
                if let table, table.newBytes == nil,
                    try
                        !(Bool.fetchOne(
                            db, sql: "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE requests = ?)",
                            arguments: [table.file])
                        ?? false)
                {
                    throw TableNotListed(file: table.file)
                }
                let now = Date().timeIntervalSince1970
                try db.execute(
                    sql: """
                        INSERT INTO checkpoints (journalPosition, state, created, lastSeq, file, requests)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [position, Data(), now, lastSeq, file, table?.file])
                let newest = db.lastInsertedRowID
                guard let spacing else {
                    return try Self.dropCheckpoints(db, where: "id < ? AND NOT base", [newest])
                }
                // The one before the new one stays only if it is `spacing` after the one before it.
                let kept = try Row.fetchAll(
                    db, sql: "SELECT id, created FROM checkpoints WHERE id < ? ORDER BY id DESC LIMIT 2",
                    arguments: [newest])
                if kept.count == 2, (kept[0]["created"] as Double) - (kept[1]["created"] as Double) < spacing {
                    return try Self.dropCheckpoints(db, where: "id = ? AND NOT base", [kept[0]["id"]])
                }
                return []
            }
        } catch {
            removeCheckpointFiles(written)
            throw error
        }
        removeCheckpointFiles(dropped)
    }

    /// The request table a checkpoint's state refers to: its file, and its bytes when it is to
    /// be written with that checkpoint.
    struct RequestTable: Sendable {
        var file: String
        var newBytes: [UInt8]?
    }

    /// A checkpoint named a kept request table that no listed checkpoint uses any more.
    struct TableNotListed: Error, CustomStringConvertible {
        var file: String
        var description: String { "the request table \(file) is no longer listed" }
    }

    /// Deletes the checkpoint rows matching `condition` and returns their files and the request
    /// tables no checkpoint left uses, to be deleted once the transaction is committed.
    private static func dropCheckpoints(
        _ db: Database, where condition: String, _ arguments: StatementArguments
    ) throws -> [String] {
        let files = try String.fetchAll(
            db, sql: "SELECT file FROM checkpoints WHERE (\(condition)) AND file IS NOT NULL", arguments: arguments)
        let tables = try String.fetchAll(
            db, sql: "SELECT DISTINCT requests FROM checkpoints WHERE (\(condition)) AND requests IS NOT NULL",
            arguments: arguments)
        try db.execute(sql: "DELETE FROM checkpoints WHERE \(condition)", arguments: arguments)
        let used = Set(
            try String.fetchAll(db, sql: "SELECT DISTINCT requests FROM checkpoints WHERE requests IS NOT NULL"))
        return files + tables.filter { !used.contains($0) }
    }

    private func removeCheckpointFiles(_ files: [String]) {
        for file in files { try? FileManager.default.removeItem(atPath: "\(checkpointDirectory)/\(file)") }
    }

    /// The newest checkpoint, with the journal position it covers.
    func latestCheckpoint() throws -> (state: [UInt8], journalPosition: Int)? {
        try checkpoint(sql: "SELECT state, journalPosition, file, requests FROM checkpoints ORDER BY id DESC LIMIT 1")
    }

    /// The state the journal was pruned to (the export starts after it) and the journal position
    /// it covers; `nil` if never pruned.
    func baseCheckpoint() throws -> (state: [UInt8], journalPosition: Int)? {
        try checkpoint(sql: "SELECT state, journalPosition, file, requests FROM checkpoints WHERE base LIMIT 1")
    }

    /// The checkpoint `sql` selects, its state read from its file when it has one (put together
    /// with its request table when it has one). A prune may drop the row and its files between
    /// the reads: then the row is read again.
    private func checkpoint(sql: String) throws -> (state: [UInt8], journalPosition: Int)? {
        for attempt in 1...3 {
            guard let row = try pool.read({ db in try Row.fetchOne(db, sql: sql) }) else { return nil }
            let position: Int = row["journalPosition"]
            guard let file: String = row["file"] else { return (Array(row["state"] as Data), position) }
            let table: String? = row["requests"]
            let state: [UInt8]
            let tableBytes: [UInt8]?
            do {
                state = Array(try Data(contentsOf: URL(fileURLWithPath: "\(checkpointDirectory)/\(file)")))
                tableBytes = try table.map {
                    Array(try Data(contentsOf: URL(fileURLWithPath: "\(checkpointDirectory)/\($0)")))
                }
            } catch  where attempt < 3 {
                continue
            }
            guard let tableBytes else { return (state, position) }
            return (try ServiceCheckpointFile.assembled(state: state, table: tableBytes), position)
        }
        return nil
    }

    /// A read-only view of the store as it is now, for an export that a prune must not cut.
    func snapshot() throws -> DatabaseSnapshot {
        try pool.makeSnapshot()
    }

    /// The journal position of the base in `snapshot`, 0 if the journal was never pruned.
    static func basePosition(in snapshot: DatabaseSnapshot) throws -> Int {
        try snapshot.read { db in
            try Int.fetchOne(db, sql: "SELECT journalPosition FROM checkpoints WHERE base LIMIT 1")
        } ?? 0
    }

    /// The journal's lines after `position` in `snapshot`, in order, `limit` at a time.
    static func journal(in snapshot: DatabaseSnapshot, after position: Int, limit: Int) throws -> [(
        position: Int, line: [UInt8]
    )] {
        try snapshot.read { db in
            try Row.fetchAll(
                db, sql: "SELECT position, line FROM journal WHERE position > ? ORDER BY position LIMIT ?",
                arguments: [position, limit]
            ).map { ($0["position"], Array($0["line"] as Data)) }
        }
    }

    /// What a prune removed.
    struct Pruned: Sendable, Equatable {
        var journalRows = 0
        var events = 0
        /// Webhook deliveries of removed events, given up.
        var deliveries = 0
    }

    /// `--retention`: drops the journal and the event log up to the newest checkpoint saved before
    /// `cutoff`, which becomes the export's base (`GET /v1/export/checkpoint`): `fenceline run
    /// --resume` from it over the export gives exactly the log that is left. Undelivered webhook
    /// events among those dropped are given up.
    func prune(before cutoff: Double) throws -> Pruned {
        let (pruned, dropped) = try pool.write { db -> (Pruned, [String]) in
            guard
                let base = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT id, journalPosition, lastSeq FROM checkpoints WHERE created <= ?
                        ORDER BY id DESC LIMIT 1
                        """,
                    arguments: [cutoff])
            else { return (Pruned(), []) }
            let id: Int64 = base["id"]
            let position: Int = base["journalPosition"]
            let lastSeq: Int = base["lastSeq"]
            if try Bool.fetchOne(db, sql: "SELECT base FROM checkpoints WHERE id = ?", arguments: [id]) == true {
                return (Pruned(), [])
            }
            var pruned = Pruned()
            try db.execute(sql: "DELETE FROM journal WHERE position <= ?", arguments: [position])
            pruned.journalRows = db.changesCount
            pruned.deliveries = try Self.giveUp(db, where: "seq <= ?", [lastSeq])
            try db.execute(sql: "DELETE FROM events WHERE seq <= ?", arguments: [lastSeq])
            pruned.events = db.changesCount
            let dropped = try Self.dropCheckpoints(db, where: "id < ?", [id])
            try db.execute(sql: "UPDATE checkpoints SET base = (id = ?)", arguments: [id])
            return (pruned, dropped)
        }
        removeCheckpointFiles(dropped)
        return pruned
    }

    /// The journal's lines after `position`, in order, `limit` at a time.
    /// Calls `body` with each journal line after `position`, oldest first, read in place (a
    /// restart replays up to millions of them), and returns the position of the last row.
    func forEachJournalLine(after position: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Int {
        try pool.read { db in
            var last = position
            let rows = try Row.fetchCursor(
                db, sql: "SELECT position, line FROM journal WHERE position > ? ORDER BY position",
                arguments: [position])
            while let row = try rows.next() {
                last = row[0]
                try row.withUnsafeData(atIndex: 1) { data in
                    try (data ?? Data()).withUnsafeBytes { raw in
                        // A row holds a batch's lines joined by newlines (stores written before
                        // that hold one line a row, which reads the same).
                        let lines = raw.bindMemory(to: UInt8.self)
                        var start = 0
                        while start < lines.count {
                            let end = lines[start...].firstIndex(of: 0x0A) ?? lines.count
                            try body(UnsafeBufferPointer(rebasing: lines[start..<end]))
                            start = end + 1
                        }
                    }
                }
            }
            return last
        }
    }

    /// The seq of the newest event logged, 0 for none.
    func lastSeq() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT MAX(seq) FROM events") ?? 0 }
    }

    /// The event log after `seq`, oldest first.
    func events(after seq: Int, limit: Int) throws -> [LoggedEvent] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT seq, kind, device, request, json FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                arguments: [seq, limit]
            ).map(LoggedEvent.init(row:))
        }
    }

    /// The newest enter or exit event of `device` for each request, as logged.
    func lastCrossings(device: String) throws -> [LoggedEvent] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, kind, device, request, json FROM events
                    WHERE seq IN (SELECT MAX(seq) FROM events WHERE device = ? AND kind IN ('enter', 'exit')
                                  GROUP BY request)
                    ORDER BY seq
                    """,
                arguments: [device]
            ).map(LoggedEvent.init(row:))
        }
    }

    /// A setting, or `nil`.
    func meta(_ key: String) throws -> [UInt8]? {
        try pool.read { db in
            try Data.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]).map { Array($0) }
        }
    }

    func setMeta(_ key: String, _ value: [UInt8]) throws {
        try pool.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key, Data(value)])
        }
    }
}

extension ServiceStore.LoggedEvent {
    /// An event from a row of `events` (seq, kind, device, request, json).
    init(row: Row) {
        self.init(
            seq: row["seq"], kind: row["kind"], device: row["device"], request: row["request"],
            json: Array(row["json"] as Data))
    }
}
