/// An instant on the event-time clock: whole microseconds since 1970-01-01T00:00:00Z.
///
/// Integer microseconds keep timer arithmetic exact: a timer due at `since + delay` compares equal
/// to a reading stamped at that instant, which a `Double` of seconds cannot promise.
public struct Timestamp: Hashable, Comparable, Sendable {
    /// Microseconds since the Unix epoch (negative before it).
    public var microseconds: Int64

    /// Creates an instant from microseconds since the Unix epoch.
    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// Creates an instant from seconds since the Unix epoch, rounded to the nearest microsecond.
    public init(seconds: Double) {
        self.microseconds = Int64((seconds * 1_000_000).rounded())
    }

    /// Seconds since the Unix epoch.
    public var seconds: Double { Double(microseconds) / 1_000_000 }

    /// This instant moved by `span`.
    public func advanced(by span: TimeSpan) -> Timestamp {
        Timestamp(microseconds: microseconds &+ span.microseconds)
    }

    /// The span from `earlier` to this instant.
    public func span(since earlier: Timestamp) -> TimeSpan {
        TimeSpan(microseconds: microseconds - earlier.microseconds)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.microseconds < rhs.microseconds }
}

/// A length of time in whole microseconds, as the catalog's delays, dwell and windows are kept.
public struct TimeSpan: Hashable, Comparable, Sendable {
    /// The length in microseconds.
    public var microseconds: Int64

    /// Creates a span of `microseconds`.
    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    /// Creates a span from seconds, rounded to the nearest microsecond.
    public init(seconds: Double) {
        self.microseconds = Int64((seconds * 1_000_000).rounded())
    }

    /// The span in seconds.
    public var seconds: Double { Double(microseconds) / 1_000_000 }

    /// No time at all.
    public static let zero = TimeSpan(microseconds: 0)

    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.microseconds < rhs.microseconds }
}
