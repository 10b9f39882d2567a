import GEOSBridge

/// A request as the engine holds it: the value, where it lives (slot), when it was added, and
/// for region triggers everything the hot path needs already resolved.
final class RequestEntry {
    let request: NotificationRequest
    let slot: Int32
    /// The engine's apply counter when the request was added: a fix applied later has a larger one.
    let addedSequence: UInt64
    let addedTime: Timestamp
    /// Interned devices in scope; `nil` means every device.
    let scope: Set<Int32>?
    let region: RegionEntry?
    let beacon: BeaconEntry?
    /// When it may notify; `nil` is always.
    let gate: ScheduleGate?
    /// For time-interval and calendar triggers.
    let timing: TimingEntry?
    /// Scoped device names in order, for one notification per listed device.
    let scopeNames: [String]?
    /// A non-repeating time or calendar request that has fired: delivered, no longer pending.
    var isFinished = false
    /// The next time a time or calendar trigger is due, and the token of its live timer.
    var nextFire: Timestamp?
    var timerToken: UInt64 = 0
    /// Devices a non-repeating region or beacon request has already notified.
    var finishedDevices = 0
    /// Cleared when the request is replaced or removed; timers and records of a dead entry are dropped.
    var isAlive = true

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
        self.beacon = beacon
        self.gate = gate
        self.timing = timing
        self.scopeNames = request.devices.map { Array(Set($0)).sorted() }
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

/// A region trigger resolved for the hot path (a class, so reading it does not copy the fence).
final class RegionEntry {
    let trigger: RegionTrigger
    let fence: PreparedFence
    let rules: RegionStateMachine.Rules
    /// Index of this request's accuracy threshold in the engine's bucket table.
    let bucket: Int
    let maxAccuracy: Double
    let mode: AccuracyMode
    let enterCushion: Double
    let exitCushion: Double
    let enterOverlap: Double
    let exitOverlap: Double

    init(trigger: RegionTrigger, fence: PreparedFence, bucket: Int) {
        let hysteresis = trigger.hysteresis
        self.trigger = trigger
        self.fence = fence
        self.bucket = bucket
        rules = RegionStateMachine.Rules(
            enterDelay: hysteresis.enterDelay, exitDelay: hysteresis.exitDelay, minFixes: hysteresis.minFixes,
            dwell: trigger.notifyOnDwell ? trigger.dwell : nil)
        maxAccuracy = hysteresis.maxAccuracy ?? .infinity
        mode = hysteresis.accuracy
        enterCushion = hysteresis.enterCushion
        exitCushion = hysteresis.exitCushion
        enterOverlap = hysteresis.enterOverlap
        exitOverlap = hysteresis.exitOverlap
    }

    /// Metres beyond its fence where a fix may still meet the enter condition, for the index.
    var reach: Double { max(0, -enterCushion) }

    /// Whether a fix's accuracy widens where it may enter (so index queries must widen too).
    var widensWithAccuracy: Bool { mode == .generous || mode == .overlap }

    /// The SPEC §5 condition table for a fix at `point` with accuracy `a`.
    ///
    /// The three distance modes are thresholds on `s`: enter when `s ≤ enterLimit`, exit when
    /// `s > exitLimit`. The exact `s` is only computed when it matters: a circle is first measured
    /// by a local projection (within 3 cm) and falls back to haversine only within 10 cm of a
    /// threshold; a polygon measures only the edges within reach of a threshold.
    @inline(__always)
    func condition(point: Coordinate, accuracy a: Double) -> RegionStateMachine.Condition {
        let enterLimit: Double
        let exitLimit: Double
        switch mode {
        case .ignore:
            (enterLimit, exitLimit) = (-enterCushion, exitCushion)
        case .conservative:
            (enterLimit, exitLimit) = (-enterCushion - a, exitCushion + a)
        case .generous:
            (enterLimit, exitLimit) = (a - enterCushion, exitCushion + a)
        case .overlap:
            let s = fence.signedDistance(to: point)
            let share = fence.overlapShare(point: point, accuracy: a, signedDistance: s)
            if share >= enterOverlap { return .enter }
            return share <= exitOverlap ? .exit : .band
        }
        func classify(_ s: Double) -> RegionStateMachine.Condition {
            if s <= enterLimit + boundaryTolerance { return .enter }
            return s > exitLimit + boundaryTolerance ? .exit : .band
        }
        switch fence.shape {
        case .circle(let circle):
            if let approximate = circle.approximateDistance(to: point) {
                let s = approximate - circle.radius
                if s <= enterLimit - 0.1 { return .enter }
                if s > exitLimit + 0.1 { return .exit }
                if s > enterLimit + 0.1 && s <= exitLimit - 0.1 { return .band }
            }
            return classify(fence.signedDistance(to: point))
        case .polygon(let polygon):
            let (inside, distance) = polygon.containment(
                of: point, measuringWithin: max(abs(enterLimit), abs(exitLimit)) + 1)
            if distance <= boundaryTolerance { return classify(0) }
            return classify(inside ? -distance : distance)
        case .corridor:
            return classify(fence.signedDistance(to: point))
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
        switch rule {
        case .interval(let first, _): max(first, added)
        case .calendar(let calendar): calendar.nextFiring(after: added)
        }
    }

    /// The due time after one at `due`, on the interval's grid or the calendar's next match.
    func nextDue(after due: Timestamp) -> Timestamp? {
        switch rule {
        case .interval(let first, let every):
            let steps = (due.microseconds - first.microseconds).floorDividedBy(every.microseconds).quotient + 1
            return first.advanced(by: TimeSpan(microseconds: steps * every.microseconds))
        case .calendar(let calendar):
            return calendar.nextFiring(after: due)
        }
    }
}
