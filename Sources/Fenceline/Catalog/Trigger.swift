/// What makes a request fire.
///
/// The larger, rarer triggers are boxed (`indirect`): a trigger is as large as its largest case,
/// and a catalog of many fences would otherwise pay a calendar trigger's size for each.
public enum Trigger: Hashable, Sendable {
    /// Entering, leaving, dwelling in or crossing a fence.
    case region(RegionTrigger)
    /// Coming into or out of range of a BLE beacon.
    indirect case beacon(BeaconTrigger)
    /// A number of seconds after a start, once or repeatedly.
    case timeInterval(TimeIntervalTrigger)
    /// Matching date components in a time zone.
    indirect case calendar(CalendarTrigger)
    /// Two devices coming within a distance of each other (SPEC §12).
    indirect case proximity(ProximityTrigger)

    /// The kind, as written in the catalog's `type` and in events' `trigger`.
    public var kind: TriggerKind {
        switch self {
        case .region: .region
        case .beacon: .beacon
        case .timeInterval: .timeInterval
        case .calendar: .calendar
        case .proximity: .proximity
        }
    }
}

/// The trigger types of SPEC §2 and §12.
public enum TriggerKind: String, Hashable, Sendable, CaseIterable {
    case region, beacon, timeInterval, calendar, proximity
}

/// A fence and what to report about it (SPEC §5).
public struct RegionTrigger: Hashable, Sendable {
    /// The fence.
    public var geometry: RegionGeometry
    /// Report confirmed enters.
    public var notifyOnEntry: Bool
    /// Report confirmed exits.
    public var notifyOnExit: Bool
    /// Report one `dwell` per visit after ``dwell`` inside.
    public var notifyOnDwell: Bool
    /// How long a visit lasts before it counts as a dwell; required with ``notifyOnDwell``.
    public var dwell: TimeSpan?
    /// Report paths between two outside fixes that pass through the fence.
    public var notifyOnCross: Bool
    /// How the path between two fixes is drawn for ``notifyOnCross``.
    public var crossing: CrossingPath
    /// What a device's first usable fix reports.
    public var initial: InitialPolicy
    /// Whether the trigger fires on every transition, or only once per device.
    public var repeats: Bool
    /// How noisy fixes become transitions.
    public var hysteresis: Hysteresis

    /// Creates a region trigger with the defaults of SPEC §2 for everything but the fence.
    public init(
        geometry: RegionGeometry, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        notifyOnDwell: Bool = false, dwell: TimeSpan? = nil, notifyOnCross: Bool = false,
        crossing: CrossingPath = .geodesic, initial: InitialPolicy = .silent, repeats: Bool = true,
        hysteresis: Hysteresis = .default
    ) {
        self.geometry = geometry
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.notifyOnDwell = notifyOnDwell
        self.dwell = dwell
        self.notifyOnCross = notifyOnCross
        self.crossing = crossing
        self.initial = initial
        self.repeats = repeats
        self.hysteresis = hysteresis
    }
}

/// What a device's first usable fix for a request reports (SPEC §5, initial state).
public enum InitialPolicy: String, Hashable, Sendable, CaseIterable {
    /// Nothing: leaving *unknown* is not a crossing (Apple).
    case silent
    /// A first fix inside fires `enter` (Android's INITIAL_TRIGGER_ENTER, Tile38, Traccar).
    case enter
    /// The first fix fires a `state` event, inside or outside.
    case state
}

/// A number of seconds after a start (SPEC §7).
public struct TimeIntervalTrigger: Hashable, Sendable {
    /// The interval, > 0; at least 60 s when repeating.
    public var interval: TimeSpan
    /// Whether it fires every ``interval`` after the first time.
    public var repeats: Bool
    /// When counting starts; `nil` means when the request is added.
    public var start: Timestamp?

    /// Creates a time-interval trigger.
    public init(interval: TimeSpan, repeats: Bool = false, start: Timestamp? = nil) {
        self.interval = interval
        self.repeats = repeats
        self.start = start
    }
}

/// Date components to match in a time zone (SPEC §7).
public struct CalendarTrigger: Hashable, Sendable {
    /// The components to match; unset ones are filled by SPEC §7's rules.
    public var dateComponents: CalendarComponents
    /// The IANA identifier of the zone the components are read in.
    public var timeZone: String
    /// Whether it fires at every match, or once.
    public var repeats: Bool

    /// Creates a calendar trigger.
    public init(dateComponents: CalendarComponents, timeZone: String = "UTC", repeats: Bool = false) {
        self.dateComponents = dateComponents
        self.timeZone = timeZone
        self.repeats = repeats
    }
}

/// The date components a calendar trigger can name; `nil` is unset.
public struct CalendarComponents: Hashable, Sendable {
    public var year: Int?
    public var month: Int?
    public var day: Int?
    public var hour: Int?
    public var minute: Int?
    public var second: Int?
    /// 1 = Sunday … 7 = Saturday.
    public var weekday: Int?
    /// ⌊(day − 1) / 7⌋ + 1: the n-th such weekday of the month.
    public var weekdayOrdinal: Int?

    /// Creates components; unset ones are `nil`.
    public init(
        year: Int? = nil, month: Int? = nil, day: Int? = nil, hour: Int? = nil, minute: Int? = nil,
        second: Int? = nil, weekday: Int? = nil, weekdayOrdinal: Int? = nil
    ) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
        self.weekday = weekday
        self.weekdayOrdinal = weekdayOrdinal
    }
}
