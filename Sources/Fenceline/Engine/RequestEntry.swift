import GEOSBridge

/// What changes about a request while it lives; one per slot, beside the immutable entry, so
/// engines forked from one another share their entries (see `Engine.fork`).
struct RequestState {
    /// The next time a time or calendar trigger is due, and the token of its live timer. First,
    /// so that the flags below fill the optional's padding.
    var nextFire: Timestamp?
    /// Cleared when the request is replaced or removed; timers and records of a dead entry are dropped.
    var isAlive = true
    /// A non-repeating time or calendar request that has fired: delivered, no longer pending.
    var isFinished = false
    var timerToken: UInt64 = 0
    /// Devices a non-repeating region or beacon request has already notified.
    var finishedDevices = 0
}

/// A request as the engine holds it: the value, where it lives (slot), when it was added, and
/// for region triggers everything the hot path needs already resolved. Immutable once made (what
/// changes is in `RequestState`), so engines forked from one another share it.
final class RequestEntry {
    let request: NotificationRequest
    let slot: Int32
    /// Beside `slot`, in its padding.
    let triggerKind: TriggerKind
    /// The engine's apply counter when the request was added: a fix applied later has a larger one.
    let addedSequence: UInt64
    let addedTime: Timestamp
    /// Interned devices in scope; `nil` means every device.
    let scope: Set<Int32>?
    let region: RegionEntry?
    /// What only some requests have, boxed together (`nil` for a plain region request): held
    /// inline they made every region request's entry four references larger.
    private let extras: Extras?

    private final class Extras {
        let beacon: BeaconEntry?
        let gate: ScheduleGate?
        let timing: TimingEntry?
        let scopeNames: [String]?

        init(beacon: BeaconEntry?, gate: ScheduleGate?, timing: TimingEntry?, scopeNames: [String]?) {
            self.beacon = beacon
            self.gate = gate
            self.timing = timing
            self.scopeNames = scopeNames
        }
    }

    var beacon: BeaconEntry? { extras?.beacon }
    /// When it may notify; `nil` is always.
    var gate: ScheduleGate? { extras?.gate }
    /// For time-interval and calendar triggers.
    var timing: TimingEntry? { extras?.timing }
    /// Scoped device names in order, for one notification per listed device.
    var scopeNames: [String]? { extras?.scopeNames }
    /// What every event of the request carries.
    var id: String { request.id }
    var content: NotificationContent { request.content }

    init(
        request: NotificationRequest, slot: Int32, addedSequence: UInt64, addedTime: Timestamp,
        scope: Set<Int32>?, region: RegionEntry?, beacon: BeaconEntry?, gate: ScheduleGate?, timing: TimingEntry?
    ) {
        self.request = request
        self.slot = slot
        self.addedSequence = addedSequence
        self.addedTime = addedTime
        self.scope = scope
        self.region = region
        let scopeNames = request.devices.map { Array(Set($0)).sorted() }
        extras =
            beacon == nil && gate == nil && timing == nil && scopeNames == nil
            ? nil : Extras(beacon: beacon, gate: gate, timing: timing, scopeNames: scopeNames)
        self.triggerKind = request.trigger.kind
    }

    /// This entry with another device scope or region entry (renumbered devices, a fork's own
    /// GEOS fences), the rest shared.
    func replacing(scope: Set<Int32>?? = nil, region: RegionEntry? = nil) -> RequestEntry {
        RequestEntry(
            request: request, slot: slot, addedSequence: addedSequence, addedTime: addedTime,
            scope: scope ?? self.scope,
            region: region ?? self.region, beacon: beacon, gate: gate, timing: timing)
    }

    /// Whether a notification of this request at `time` would be delivered (its schedule is open).
    func mayNotify(at time: Timestamp) -> Bool {
        gate?.isOpen(at: time) ?? true
    }

    @inline(__always)
    func applies(to device: Int32) -> Bool {
        scope?.contains(device) ?? true
    }
}

/// A region trigger resolved for the hot path: its fence, and its settings, shared with the
/// region request installed just before it when they are the same (a catalog's fences mostly
/// are), read as its own members (`region.rules`).
/// Held inline by the request's entry (a few references, one allocation per fence fewer than an
/// object of its own).
@dynamicMemberLookup
struct RegionEntry {
    let fence: PreparedFence
    let settings: RegionSettings

    /// With `previous`, the settings of the last region installed: shared when equal (a catalog's
    /// fences mostly have the same, and a large catalog would hold a copy per fence).
    init(trigger: RegionTrigger, fence: PreparedFence, bucket: Int, previous: RegionSettings? = nil) {
        self.fence = fence
        let values = HotSettings(trigger: trigger, bucket: bucket)
        if let previous, previous.values.pointee == values {
            settings = previous
        } else {
            settings = RegionSettings(values)
        }
    }

    subscript<T>(dynamicMember keyPath: KeyPath<HotSettings, T>) -> T {
        settings.values.pointee[keyPath: keyPath]
    }
}

/// A region trigger's fields the engine reads (the rest it reads from the request), resolved
/// once, as plain values at a fixed address: the candidate loop's slots point at them
/// (``HotSlot/settings``).
final class RegionSettings: Equatable {
    let values: UnsafeMutablePointer<HotSettings>

    init(_ settings: HotSettings) {
        values = .allocate(capacity: 1)
        values.initialize(to: settings)
    }

    deinit {
        values.deallocate()
    }

    static func == (a: RegionSettings, b: RegionSettings) -> Bool { a.values.pointee == b.values.pointee }
}

/// A region request's settings as plain values (see ``RegionSettings``).
struct HotSettings: Equatable {
    var notifyOnEntry = false
    var notifyOnExit = false
    var notifyOnCross = false
    var repeats = true
    var mode = AccuracyMode.ignore
    var initial = InitialPolicy.silent
    var crossing = CrossingPath.geodesic
    /// Index of the request's accuracy threshold in the engine's bucket table.
    var bucket = 0
    var maxAccuracy = Double.infinity
    var enterCushion = 0.0
    var exitCushion = 0.0
    var enterOverlap = 0.0
    var exitOverlap = 0.0
    var rules = RegionStateMachine.Rules(enterDelay: .zero, exitDelay: .zero, minFixes: 1, dwell: nil)

    /// Those of a slot that is not a region's (never freed).
    nonisolated(unsafe) static let none: UnsafePointer<HotSettings> = {
        let settings = UnsafeMutablePointer<HotSettings>.allocate(capacity: 1)
        settings.initialize(to: HotSettings())
        return UnsafePointer(settings)
    }()
}

extension HotSettings {
    /// Metres beyond its fence where a fix may still meet the enter condition, for the index.
    var reach: Double { max(0, -enterCushion) }

    /// Whether a fix's accuracy widens where it may enter (so index queries must widen too).
    var widensWithAccuracy: Bool { mode == .generous || mode == .overlap }

    // In an extension, so the struct keeps its memberwise initializer.
    init(trigger: RegionTrigger, bucket: Int) {
        let hysteresis = trigger.hysteresis
        self.init(
            notifyOnEntry: trigger.notifyOnEntry, notifyOnExit: trigger.notifyOnExit,
            notifyOnCross: trigger.notifyOnCross, repeats: trigger.repeats, mode: hysteresis.accuracy,
            initial: trigger.initial, crossing: trigger.crossing, bucket: bucket,
            maxAccuracy: hysteresis.maxAccuracy ?? .infinity, enterCushion: hysteresis.enterCushion,
            exitCushion: hysteresis.exitCushion, enterOverlap: hysteresis.enterOverlap,
            exitOverlap: hysteresis.exitOverlap,
            rules: RegionStateMachine.Rules(
                enterDelay: hysteresis.enterDelay, exitDelay: hysteresis.exitDelay,
                minFixes: hysteresis.minFixes, dwell: trigger.notifyOnDwell ? trigger.dwell : nil))
    }
}

/// What the candidate loop reads for every slot: plain values in one flat array, so evaluating a
/// fix against a fence touches this struct (and, for a polygon, its block, or for a multipolygon
/// the engine's polygon array) instead of chasing the request, region and fence objects, which
/// are read only when an event fires.
struct HotSlot {
    enum Shape: UInt8 {
        case none, circle, polygon, other
    }

    var isAlive = false
    var isScoped = false
    var shape = Shape.none
    var addedSequence: UInt64 = 0
    /// The request's region settings, shared with the slots of the requests installed before it
    /// with the same (so they stay in cache, and a slot is half the size it was with a copy);
    /// owned by its ``RegionSettings``, which the engine keeps.
    var settings = HotSettings.none
    /// Index into the engine's polygon array for polygon fences.
    var polygon = 0
    /// A simple polygon's measurement data (see ``PolygonShape/Block``), kept alive by the
    /// engine's polygon array.
    var polygonBlock: PolygonShape.Block?
    var circle = CircleShape(center: Coordinate(latitude: 0, longitude: 0), radius: 0)

    init() {}

    init(entry: RequestEntry, polygon: Int) {
        isAlive = true
        isScoped = entry.scope != nil
        addedSequence = entry.addedSequence
        guard let region = entry.region else { return }
        settings = UnsafePointer(region.settings.values)
        self.polygon = polygon
        switch region.fence.shape {
        case .circle(let circle):
            shape = .circle
            self.circle = circle
        case .polygon(let polygon):
            shape = .polygon
            polygonBlock = polygon.block
        case .corridor:
            shape = .other
        }
    }

    // The settings the loop reads, each a plain load through `settings` (spelled out rather than
    // looked up by key path as the region entry's are: these are read per candidate). An action
    // with an output reads `notifiesOnEntry`, `notifiesOnExit` and `repeats` here rather than
    // from the region entry, a chain of likely cache misses per event.
    var notifiesOnEntry: Bool { settings.pointee.notifyOnEntry }
    var notifiesOnExit: Bool { settings.pointee.notifyOnExit }
    var repeats: Bool { settings.pointee.repeats }
    var mode: AccuracyMode { settings.pointee.mode }
    var bucket: Int { settings.pointee.bucket }
    var maxAccuracy: Double { settings.pointee.maxAccuracy }
    var enterCushion: Double { settings.pointee.enterCushion }
    var exitCushion: Double { settings.pointee.exitCushion }
    var rules: RegionStateMachine.Rules { settings.pointee.rules }
    var initial: InitialPolicy { settings.pointee.initial }

    var isRegion: Bool { shape != .none }

    /// The SPEC §5 distance conditions as thresholds on `s` (enter when `s ≤ enter`, exit when
    /// `s > exit`); `nil` in `overlap` mode, which compares shares instead.
    @inline(__always)
    func limits(accuracy a: Double) -> (enter: Double, exit: Double)? {
        switch mode {
        case .ignore: (-enterCushion, exitCushion)
        case .conservative: (-enterCushion - a, exitCushion + a)
        case .generous: (a - enterCushion, exitCushion + a)
        case .overlap: nil
        }
    }
}
/// A beacon trigger resolved for the hot path.
final class BeaconEntry {
    let trigger: BeaconTrigger
    let rules: BeaconStateMachine.Rules

    init(trigger: BeaconTrigger) {
        self.trigger = trigger
        rules = BeaconStateMachine.Rules(
            enterDelay: trigger.enterDelay, exitDelay: trigger.exitDelay, exitTimeout: trigger.exitTimeout)
    }

    /// The identity key the engine indexes this region under (missing major/minor = wildcard).
    var key: BeaconKey { BeaconKey(uuid: trigger.uuid, major: trigger.major ?? -1, minor: trigger.minor ?? -1) }
}

/// A beacon region's identity for hash lookup: -1 stands for a wildcard major or minor.
struct BeaconKey: Hashable {
    var uuid: String
    var major: Int
    var minor: Int
}

/// A time-interval or calendar trigger resolved for the clock.
final class TimingEntry {
    enum Rule {
        case interval(first: Timestamp, every: TimeSpan)
        case calendar(CalendarRule)
    }

    let rule: Rule
    let repeats: Bool
    let kind: TriggerKind

    init(rule: Rule, repeats: Bool, kind: TriggerKind) {
        self.rule = rule
        self.repeats = repeats
        self.kind = kind
    }

    /// The first due time for a request added at `added` (a due time already past fires at once).
    func firstDue(added: Timestamp) -> Timestamp? {
        let due: Timestamp? =
            switch rule {
            case .interval(let first, _): max(first, added)
            case .calendar(let calendar): calendar.nextFiring(after: added)
            }
        return due.flatMap(Self.representable)
    }

    /// The due time after one at `due`, on the interval's grid or the calendar's next match.
    func nextDue(after due: Timestamp) -> Timestamp? {
        let next: Timestamp?
        switch rule {
        case .interval(let first, let every):
            let steps = (due.microseconds - first.microseconds).floorDividedBy(every.microseconds).quotient + 1
            next = first.advanced(by: TimeSpan(microseconds: steps * every.microseconds))
        case .calendar(let calendar):
            next = calendar.nextFiring(after: due)
        }
        return next.flatMap(Self.representable)
    }

    /// A due time after the last representable instant never comes: no clock gets there.
    private static func representable(_ due: Timestamp) -> Timestamp? {
        due.isRepresentable ? due : nil
    }
}
