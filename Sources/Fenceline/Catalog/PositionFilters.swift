/// Which fixes a region request takes (SPEC §12, "Position filters"): the checks a fleet's trackers
/// need against jumps, jitter and clocks set in the future. Each is per (request, device), against
/// the last fix that request accepted from that device; the first fix is always accepted.
public struct PositionFilters: Hashable, Sendable {
    /// Metres per second: a fix implying a strictly faster move from the last accepted fix (or
    /// stamped at its time somewhere else) is dropped.
    public var maxSpeed: Double?
    /// Metres: a fix strictly closer than this to the last accepted fix only refreshes its time.
    public var minDistance: Double?
    /// How far ahead of the largest time read so far a fix may be stamped. In the catalog's
    /// defaults it makes such a line bad (`future time`); on a request it makes that request
    /// drop the fix.
    public var maxFuture: TimeSpan?

    /// Creates filters; `nil` leaves a check off.
    public init(maxSpeed: Double? = nil, minDistance: Double? = nil, maxFuture: TimeSpan? = nil) {
        self.maxSpeed = maxSpeed
        self.minDistance = minDistance
        self.maxFuture = maxFuture
    }

    /// Whether no check is on.
    public var isEmpty: Bool { maxSpeed == nil && minDistance == nil && maxFuture == nil }

    /// What is out of range, by field name: a speed limit must be positive (zero would drop every
    /// move), a distance or a lead zero or more, each finite.
    public var problems: [(field: String, message: String)] {
        var problems: [(field: String, message: String)] = []
        if let speed = maxSpeed, !(speed > 0 && speed.isFinite) {
            problems.append(("maxSpeed", "maxSpeed must be a positive number of metres per second, found \(speed)"))
        }
        if let distance = minDistance, !(distance >= 0 && distance.isFinite) {
            problems.append(("minDistance", "minDistance must be zero or more metres, found \(distance)"))
        }
        if let lead = maxFuture, lead < .zero {
            problems.append(("maxFuture", "maxFuture must be zero or more seconds, found \(lead.seconds)"))
        }
        return problems
    }
}

/// What a catalog gives every request that does not say otherwise: the hysteresis of region
/// requests and the position filters (SPEC §2 `defaults`, §12).
public struct RequestDefaults: Hashable, Sendable {
    public var hysteresis: Hysteresis
    public var filters: PositionFilters

    /// Creates defaults.
    public init(hysteresis: Hysteresis = .default, filters: PositionFilters = PositionFilters()) {
        self.hysteresis = hysteresis
        self.filters = filters
    }
}
