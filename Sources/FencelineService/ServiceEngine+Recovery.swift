import Fenceline
import FencelineFormats
import Logging

/// Rebuilding the engine from the store: the newest checkpoint, then the journal after it (at
/// start, and after a failed commit).
extension ServiceEngine {
    /// Applies the journal after `position` to `engine` and returns the position reached; the
    /// events it gives are in the log already.
    static func replayJournal(
        into engine: Engine, after position: Int, store: ServiceStore, decoder: NDJSONReadingDecoder, logger: Logger
    ) throws -> (position: Int, lines: Int) {
        var replayed = 0
        let reached = try store.forEachJournalLine(after: position) { line in
            // Every journaled line passed the lead check when it came: a replay applies it as it was.
            _ = try apply(line, to: engine, decoder: decoder, checksLead: false)
            replayed += 1
            // Their outcomes were told when the lines came in.
            if replayed.isMultiple(of: 10_000) { _ = engine.takeResponseOutcomes() }
        }
        _ = engine.takeResponseOutcomes()
        if replayed > 0 { logger.info("replayed the journal", metadata: ["lines": "\(replayed)"]) }
        return (reached, replayed)
    }

    /// Rebuilds the engine from the store after a failed commit.
    func reload() throws {
        if let checkpoint = try store.latestCheckpoint() {
            engine = try Engine(resuming: checkpoint.state, configuration: settings.configuration, logger: logger)
            requestContext.reset(categories: engine.notificationCategories)
            journalPosition = checkpoint.journalPosition
        } else {
            let catalog = try startCatalog ?? CatalogDecoder().decode(startBytes).catalog
            startCatalog = catalog
            requestContext.reset(categories: catalog.categories)
            engine = try Engine(catalog: catalog, configuration: settings.configuration, logger: logger)
            journalPosition = 0
        }
        reloads += 1
        requestTable = nil
        engine.keepsCheckpointEncodings = true
        (journalPosition, linesSinceCheckpoint) = try Self.replayJournal(
            into: engine, after: journalPosition, store: store, decoder: decoder, logger: logger)
    }
}
