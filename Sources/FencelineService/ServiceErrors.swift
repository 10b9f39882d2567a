/// The errors the service engine throws, which the routes turn into HTTP answers.
/// A `--triggers` request the store's engine refused at a restart.
struct TriggersRefused: Error, CustomStringConvertible {
    var request: String
    var reason: String
    var description: String { "--triggers: request \"\(request)\": \(reason)" }
}

/// A `PUT /v1/categories` that drops a category a pending request names (409).
struct CategoryInUse: Error {
    var category: String
    var request: String
}

/// A batch whose events would pass ``ServiceEngine/maximumBatchEvents`` (422, nothing applied).
struct TooManyEvents: Error {
    var line: Int
    var limit: Int
}

/// A batch holding a line over the limit (SPEC §11: 413).
struct LineTooLong: Error {
    var line: Int
    var limit: Int
}
