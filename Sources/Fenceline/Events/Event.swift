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
    /// What confirmed an enter, exit, dwell or cross (SPEC §12); `nil` for other kinds.
    public var reason: EventReason?
    /// The stay an enter, exit or dwell belongs to: its number, counting from 1 per request and
    /// device (``visitID`` is how events name it).
    public var visit: Int?
    /// For an exit that ends a stay: how long the stay lasted, from its enter's `since`.
    public var duration: TimeSpan?

    /// The stay as events name it: `<request>/<device>/<n>`.
    public var visitID: String? {
        visit.map { "\(requestID)/\(device ?? "")/\($0)" }
    }
    /// The beacon for beacon events.
    public var beacon: BeaconReport? {
        get { extras?.beacon }
        set {
            extras = Extras.make(beacon: newValue, other: other, content: content, actions: actions, response: response)
        }
    }
    /// For proximity events: the pair's other device, the one matching `to` (SPEC §12).
    public var other: String? {
        get { extras?.other }
        set {
            extras = Extras.make(
                beacon: beacon, other: newValue, content: content, actions: actions, response: response)
        }
    }
    /// The request's content with placeholders filled in.
    public var content: NotificationContent {
        get { extras?.content ?? NotificationContent() }
        set {
            extras = Extras.make(beacon: beacon, other: other, content: newValue, actions: actions, response: response)
        }
    }
    /// The actions of the content's category, for rendering buttons downstream.
    public var actions: [NotificationAction] {
        get { extras?.actions ?? [] }
        set {
            extras = Extras.make(beacon: beacon, other: other, content: content, actions: newValue, response: response)
        }
    }
    /// For a `response` event, the answer it reports; for a delivered notification (the ledger's
    /// entries), the latest answer to it (SPEC §8).
    public var response: ResponseReport? {
        get { extras?.response }
        set {
            extras = Extras.make(beacon: beacon, other: other, content: content, actions: actions, response: newValue)
        }
    }
    /// The beacon, other device, content, actions and response, boxed and `nil` when all are empty (most events): held
    /// inline they made an event 312 bytes instead of 128, copied on each step of its way out
    /// (the queue, the delivered ledger, the release) and faulting in the ledger's fresh pages.
    private var extras: Extras?

    /// Creates an event.
    public init(
        sequence: Int = 0, time: Timestamp, requestID: String, device: String?, trigger: TriggerKind,
        kind: EventKind, since: Timestamp? = nil, state: RegionStatus? = nil, position: Position? = nil,
        distance: Double? = nil, beacon: BeaconReport? = nil, content: NotificationContent = NotificationContent(),
        actions: [NotificationAction] = [], response: ResponseReport? = nil, reason: EventReason? = nil,
        visit: Int? = nil, duration: TimeSpan? = nil, other: String? = nil
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
        self.reason = reason
        self.visit = visit
        self.duration = duration
        self.extras = Extras.make(beacon: beacon, other: other, content: content, actions: actions, response: response)
    }
}

/// An event's rarely set parts, immutable (a setter boxes anew), compared by value.
private final class Extras: Hashable, Sendable {
    let beacon: BeaconReport?
    let other: String?
    let content: NotificationContent
    let actions: [NotificationAction]
    let response: ResponseReport?

    private init(
        beacon: BeaconReport?, other: String?, content: NotificationContent, actions: [NotificationAction],
        response: ResponseReport?
    ) {
        self.beacon = beacon
        self.other = other
        self.content = content
        self.actions = actions
        self.response = response
    }

    /// The box, or `nil` when every part is empty (so equal events hold equal boxes or none).
    static func make(
        beacon: BeaconReport?, other: String?, content: NotificationContent, actions: [NotificationAction],
        response: ResponseReport?
    ) -> Extras? {
        guard beacon != nil || other != nil || !content.isEmpty || !actions.isEmpty || response != nil else {
            return nil
        }
        return Extras(beacon: beacon, other: other, content: content, actions: actions, response: response)
    }

    static func == (a: Extras, b: Extras) -> Bool {
        a.beacon == b.beacon && a.other == b.other && a.content == b.content && a.actions == b.actions
            && a.response == b.response
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(beacon)
        hasher.combine(other)
        hasher.combine(content)
        hasher.combine(actions)
        hasher.combine(response)
    }
}

/// A user's answer to a delivered notification (`UNNotificationResponse`), as a `response` event
/// reports it and as the delivered notification keeps it.
public struct ResponseReport: Hashable, Sendable {
    /// The `seq` of the notification answered.
    public var respondsTo: Int
    /// `"default"` (opened), `"dismiss"`, or the id of one of the category's actions.
    public var action: String
    /// What the user typed into a text-input action.
    public var text: String?
    /// The action's options (`foreground`, `destructive`, `authenticationRequired`).
    public var options: [String]
    /// When the answer was applied.
    public var time: Timestamp

    /// Creates a report.
    public init(respondsTo: Int, action: String, text: String?, options: [String], time: Timestamp) {
        self.respondsTo = respondsTo
        self.action = action
        self.text = text
        self.options = options
        self.time = time
    }
}

/// What an event reports.
public enum EventKind: String, Hashable, Sendable, CaseIterable {
    case enter, exit, dwell, cross, state, fire, response

    /// The order of events of one instant (SPEC §4): exits, enters, state, dwell, cross, fires,
    /// responses.
    public var rank: Int {
        switch self {
        case .exit: 0
        case .enter: 1
        case .state: 2
        case .dwell: 3
        case .cross: 4
        case .fire: 5
        case .response: 6
        }
    }
}

/// What confirmed an event (SPEC §12, "Reasons").
public enum EventReason: String, Hashable, Sendable, CaseIterable {
    /// A fix, sighting or pair evaluation met the condition at once (every `cross`).
    case observed
    /// A delay's timer confirmed it (every `dwell`).
    case delayed
    /// A beacon's exit timeout, or a proximity pair aging out (`maxAge`).
    case timeout
    /// A device's first fix, under `initial: "enter"`.
    case initial
    /// The request expired, or the device was silent past `--device-ttl`.
    case expired
    /// The device was removed (`removeDevice`).
    case removed
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
