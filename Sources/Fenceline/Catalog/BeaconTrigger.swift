/// A BLE beacon region: a UUID with optional major and minor (missing = wildcard), SPEC §6.
public struct BeaconTrigger: Hashable, Sendable {
    /// The proximity UUID (or Eddystone namespace), upper-case with dashes.
    public var uuid: String
    /// The major value to match; `nil` matches any.
    public var major: Int?
    /// The minor value to match; `nil` matches any.
    public var minor: Int?
    /// The farthest proximity class that still counts as inside.
    public var proximity: Proximity
    /// The smoothing window: samples strictly younger than this are averaged.
    public var window: TimeSpan
    /// How RSSI is smoothed.
    public var filter: RSSIFilter
    /// The calibrated RSSI at 1 m when a sighting carries none.
    public var txPower: Double
    /// The RSSI-to-distance curve.
    public var distanceModel: DistanceModel
    /// How long sightings must count before an enter is confirmed.
    public var enterDelay: TimeSpan
    /// With a value, sightings that stop counting for this long exit; `nil` leaves exits to the timeout.
    public var exitDelay: TimeSpan?
    /// No counting sighting for more than this long exits.
    public var exitTimeout: TimeSpan
    /// Report enters.
    public var notifyOnEntry: Bool
    /// Report exits.
    public var notifyOnExit: Bool
    /// Whether the trigger fires on every transition, or once per device.
    public var repeats: Bool

    /// Creates a beacon trigger with the defaults of SPEC §2.
    public init(
        uuid: String, major: Int? = nil, minor: Int? = nil, proximity: Proximity = .far,
        window: TimeSpan = TimeSpan(seconds: 20), filter: RSSIFilter = .average, txPower: Double = -59,
        distanceModel: DistanceModel = .standard, enterDelay: TimeSpan = .zero, exitDelay: TimeSpan? = nil,
        exitTimeout: TimeSpan = TimeSpan(seconds: 30), notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        repeats: Bool = true
    ) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.proximity = proximity
        self.window = window
        self.filter = filter
        self.txPower = txPower
        self.distanceModel = distanceModel
        self.enterDelay = enterDelay
        self.exitDelay = exitDelay
        self.exitTimeout = exitTimeout
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.repeats = repeats
    }
}

/// Beacon proximity classes, nearest first.
public enum Proximity: String, Hashable, Sendable, CaseIterable, Comparable {
    case immediate, near, far

    public static func < (lhs: Proximity, rhs: Proximity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// How a beacon's RSSI samples are smoothed.
public enum RSSIFilter: Hashable, Sendable {
    /// A trimmed running average over the window.
    case average
    /// An ARMA filter `x ← x − c·(x − rssi)`.
    case arma(coefficient: Double)
}

/// The RSSI-to-distance curve: `ratio < 1 ⇒ ratio^10`, else `c1·ratio^c2 + c3`.
public struct DistanceModel: Hashable, Sendable {
    public var c1: Double
    public var c2: Double
    public var c3: Double

    /// Creates a curve from its coefficients.
    public init(c1: Double, c2: Double, c3: Double) {
        self.c1 = c1
        self.c2 = c2
        self.c3 = c3
    }

    /// The coefficients of SPEC §6 (0.42093, 6.9476, 0.54992).
    public static let standard = DistanceModel(c1: 0.42093, c2: 6.9476, c3: 0.54992)
}
