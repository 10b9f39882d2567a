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

extension Timestamp {
    /// The first instant Fenceline reads or writes: 0000-01-01T00:00:00Z, RFC 3339's first year.
    public static let earliest = Timestamp(microseconds: -62_167_219_200_000_000)
    /// The last: 9999-12-31T23:59:59.999999Z, RFC 3339's last year.
    public static let latest = Timestamp(microseconds: 253_402_300_799_999_999)

    /// An instant from seconds since the Unix epoch, rounded to the microsecond; `nil` when the
    /// number is not finite or the instant falls outside ``earliest``…``latest`` (every time a
    /// reading, a catalog or an option gives is checked so, and refused as a located error).
    public init?(checkedSeconds seconds: Double) {
        guard seconds.isFinite, seconds >= Self.earliest.seconds, seconds <= Self.latest.seconds else { return nil }
        self.init(seconds: seconds)
    }

    /// Whether the instant lies within ``earliest``…``latest``.
    public var isRepresentable: Bool { self >= Self.earliest && self <= Self.latest }
}

extension TimeSpan {
    /// The longest span: from ``Timestamp/earliest`` to ``Timestamp/latest``.
    public static let longest = TimeSpan(
        microseconds: Timestamp.latest.microseconds - Timestamp.earliest.microseconds)

    /// A span of `seconds`, rounded to the microsecond; `nil` when the number is not finite or
    /// longer (either way) than ``longest``.
    public init?(checkedSeconds seconds: Double) {
        guard seconds.isFinite, abs(seconds) <= Self.longest.seconds else { return nil }
        self.init(seconds: seconds)
    }
}
