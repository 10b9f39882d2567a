/// A notification fired by the engine (SPEC §8).
public struct Event: Hashable, Sendable {
    /// The position in the output, from 1, assigned when the event leaves the engine.
    public var sequence: Int
    /// When it fired: the confirming fix, or the due time of the timer that fired it.
    public var time: Timestamp
    /// The request's identifier.
    public var requestID: String
    /// The device it is for; `nil` for an unscoped time or calendar trigger.
    public var device: String?
    /// The kind of trigger that fired.
    public var trigger: TriggerKind
    /// What happened.
    public var kind: EventKind
    /// The first fix of the streak that led to an enter or exit.
    public var since: Timestamp?
    /// For `state` events: whether the first fix was inside.
    public var state: RegionStatus?
    /// The fix the event refers to.
    public var position: Position?
    /// `s(p)` at that fix, in metres (negative inside).
    public var distance: Double?
    /// The beacon for beacon events.
    public var beacon: BeaconReport? {
        get { extras?.beacon }
        set { extras = Extras.make(beacon: newValue, content: content, actions: actions) }
    }
    /// The request's content with placeholders filled in.
    public var content: NotificationContent {
        get { extras?.content ?? NotificationContent() }
        set { extras = Extras.make(beacon: beacon, content: newValue, actions: actions) }
    }
    /// The actions of the content's category, for rendering buttons downstream.
    public var actions: [NotificationAction] {
        get { extras?.actions ?? [] }
        set { extras = Extras.make(beacon: beacon, content: content, actions: newValue) }
    }
    /// The beacon, content and actions, boxed and `nil` when all are empty (most events): held
    /// inline they made an event 312 bytes instead of 128, copied on each step of its way out
    /// (the queue, the delivered ledger, the release) and faulting in the ledger's fresh pages.
    private var extras: Extras?

    /// Creates an event.
    public init(
        sequence: Int = 0, time: Timestamp, requestID: String, device: String?, trigger: TriggerKind,
        kind: EventKind, since: Timestamp? = nil, state: RegionStatus? = nil, position: Position? = nil,
        distance: Double? = nil, beacon: BeaconReport? = nil, content: NotificationContent = NotificationContent(),
        actions: [NotificationAction] = []
    ) {
        self.sequence = sequence
        self.time = time
        self.requestID = requestID
        self.device = device
        self.trigger = trigger
        self.kind = kind
        self.since = since
        self.state = state
        self.position = position
        self.distance = distance
        self.extras = Extras.make(beacon: beacon, content: content, actions: actions)
    }
}

/// An event's rarely set parts, immutable (a setter boxes anew), compared by value.
private final class Extras: Hashable, Sendable {
    let beacon: BeaconReport?
    let content: NotificationContent
    let actions: [NotificationAction]

    private init(beacon: BeaconReport?, content: NotificationContent, actions: [NotificationAction]) {
        self.beacon = beacon
        self.content = content
        self.actions = actions
    }

    /// The box, or `nil` when every part is empty (so equal events hold equal boxes or none).
    static func make(beacon: BeaconReport?, content: NotificationContent, actions: [NotificationAction]) -> Extras? {
        guard beacon != nil || !content.isEmpty || !actions.isEmpty else { return nil }
        return Extras(beacon: beacon, content: content, actions: actions)
    }

    static func == (a: Extras, b: Extras) -> Bool {
        a.beacon == b.beacon && a.content == b.content && a.actions == b.actions
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(beacon)
        hasher.combine(content)
        hasher.combine(actions)
    }
}

/// What an event reports.
public enum EventKind: String, Hashable, Sendable, CaseIterable {
    case enter, exit, dwell, cross, state, fire

    /// The order of events of one instant (SPEC §4): exits, enters, state, dwell, cross, fires.
    public var rank: Int {
        switch self {
        case .exit: 0
        case .enter: 1
        case .state: 2
        case .dwell: 3
        case .cross: 4
        case .fire: 5
        }
    }
}

/// Inside or outside, as `state` events report.
public enum RegionStatus: String, Hashable, Sendable {
    case inside, outside
}

/// Where a device was, as events report it.
public struct Position: Hashable, Sendable {
    public var coordinate: Coordinate
    /// The fix's accuracy in metres, when it had one.
    public var accuracy: Double?

    /// Creates a position.
    public init(coordinate: Coordinate, accuracy: Double? = nil) {
        self.coordinate = coordinate
        self.accuracy = accuracy
    }
}

/// The beacon a beacon event names, with its smoothed signal.
public struct BeaconReport: Hashable, Sendable {
    public var identity: BeaconIdentity
    /// Smoothed RSSI in dBm.
    public var rssi: Double
    /// Estimated distance in metres.
    public var distance: Double
    public var proximity: Proximity

    /// Creates a report.
    public init(identity: BeaconIdentity, rssi: Double, distance: Double, proximity: Proximity) {
        self.identity = identity
        self.rssi = rssi
        self.distance = distance
        self.proximity = proximity
    }
}
