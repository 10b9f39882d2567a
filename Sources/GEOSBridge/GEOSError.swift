/// An error reported by GEOS, carrying the message its error handler received.
public struct GEOSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the bridge was doing when GEOS failed, such as `"GEOSIntersection"`.
    public var operation: String
    /// The message GEOS passed to the context's error handler, or a fallback when it sent none.
    public var message: String

    /// Creates an error for `operation` with GEOS's `message`.
    public init(operation: String, message: String) {
        self.operation = operation
        self.message = message
    }

    public var description: String { "\(operation) failed: \(message)" }
}
