/// One input record: a position fix, a beacon sighting, or a control record (SPEC §3).
public enum Reading: Hashable, Sendable {
    case fix(Fix)
    case sighting(BeaconSighting)
    case control(ControlRecord)

    /// The reading's time; a control record may have none (it applies at the clock).
    public var time: Timestamp? {
        switch self {
        case .fix(let fix): fix.time
        case .sighting(let sighting): sighting.time
        case .control(let control): control.time
        }
    }
}

/// A position fix of one device.
public struct Fix: Hashable, Sendable {
    /// The device's identifier.
    public var device: String
    /// When the fix was taken (event time).
    public var time: Timestamp
    /// Where.
    public var coordinate: Coordinate
    /// The horizontal 68 % radius in metres; `nil` when unknown (treated as 0).
    public var accuracy: Double?
    /// Metres per second, carried along.
    public var speed: Double?
    /// Degrees clockwise from north, carried along.
    public var heading: Double?
    /// Metres, carried along.
    public var altitude: Double?

    /// Creates a fix.
    public init(
        device: String, time: Timestamp, coordinate: Coordinate, accuracy: Double? = nil,
        speed: Double? = nil, heading: Double? = nil, altitude: Double? = nil
    ) {
        self.device = device
        self.time = time
        self.coordinate = coordinate
        self.accuracy = accuracy
        self.speed = speed
        self.heading = heading
        self.altitude = altitude
    }
}

/// A BLE beacon heard by a device.
public struct BeaconSighting: Hashable, Sendable {
    /// The listening device's identifier.
    public var device: String
    /// When the advertisement was heard.
    public var time: Timestamp
    /// The beacon's identity.
    public var beacon: BeaconIdentity
    /// Received signal strength in dBm; 0 and 127 mean "no reading" and are ignored.
    public var rssi: Double
    /// The beacon's calibrated RSSI at 1 m, when the advertisement carries it.
    public var txPower: Double?

    /// Creates a sighting.
    public init(device: String, time: Timestamp, beacon: BeaconIdentity, rssi: Double, txPower: Double? = nil) {
        self.device = device
        self.time = time
        self.beacon = beacon
        self.rssi = rssi
        self.txPower = txPower
    }
}

/// A concrete beacon: UUID (or Eddystone namespace) with major and minor.
public struct BeaconIdentity: Hashable, Sendable {
    /// Upper-case UUID with dashes.
    public var uuid: String
    public var major: Int
    public var minor: Int

    /// Creates an identity.
    public init(uuid: String, major: Int, minor: Int) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
    }
}

/// A control record in the reading stream (SPEC §3.3).
public struct ControlRecord: Hashable, Sendable {
    /// When it applies; `nil` or a time before the clock applies it at the clock.
    public var time: Timestamp?
    /// What it does.
    public var operation: Operation

    /// The operations of SPEC §3.3.
    public enum Operation: Hashable, Sendable {
        /// Add a request, replacing one with the same id (boxed: requests are large, fixes are not).
        indirect case add(NotificationRequest)
        /// Remove pending requests by id.
        case removePending([String])
        /// Remove delivered notifications by request id.
        case removeDelivered([String])
        /// Remove every pending request.
        case removeAllPending
        /// Remove every delivered notification.
        case removeAllDelivered
        /// Only move the clock.
        case tick
        /// Replace the category set (a Fenceline extension of SPEC §3.3: the service's
        /// `PUT /v1/categories`, journaled so that its export replays it). A pending request whose
        /// category is gone notifies without actions.
        case setCategories([NotificationCategory])
        /// A user's answer to a delivered notification (SPEC §8).
        case respond(NotificationResponse)
        /// Forget devices (SPEC §12): each fence a device is inside gets an `exit` with reason
        /// `removed`, then all of its state goes (its delivered notifications too) but its visit counts.
        case removeDevice([String])
    }

    /// A `tick` a driver routes to move its engines' clocks (the sharded `advance(to:)`), not
    /// one of the input, which also closes the instant at the clock; never in a checkpoint.
    package var movesClockOnly = false

    /// Creates a control record.
    public init(time: Timestamp?, operation: Operation) {
        self.time = time
        self.operation = operation
    }

    /// A ``movesClockOnly`` tick to `time`.
    package init(clockOnly time: Timestamp) {
        self.init(time: time, operation: .tick)
        movesClockOnly = true
    }
}

/// A user's answer to a delivered notification, as a `respond` control record gives it (SPEC §8):
/// the notification by its `seq`, or the latest delivered one of a request and device.
public struct NotificationResponse: Hashable, Sendable {
    /// Which delivered notification is answered.
    public enum Target: Hashable, Sendable {
        /// The notification with this `seq`.
        case sequence(Int)
        /// The latest delivered notification of this request and device (`nil`: an unscoped
        /// time or calendar request's).
        case latest(request: String, device: String?)
    }

    /// Which delivered notification is answered.
    public var target: Target
    /// `"default"` (the user opened it), `"dismiss"` (only for a category with
    /// `customDismissAction`), or the id of one of the category's actions.
    public var action: String
    /// What the user typed, only for an action with `textInput`.
    public var text: String?

    /// Creates a response.
    public init(target: Target, action: String, text: String? = nil) {
        self.target = target
        self.action = action
        self.text = text
    }

    /// The action of a notification being opened.
    public static let defaultAction = "default"
    /// The action of a notification being dismissed.
    public static let dismissAction = "dismiss"
}
