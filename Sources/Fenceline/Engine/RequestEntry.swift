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
    /// Cleared when the request is replaced or removed; timers and records of a dead entry are dropped.
    var isAlive = true

    init(
        request: NotificationRequest, slot: Int32, addedSequence: UInt64, addedTime: Timestamp,
        scope: Set<Int32>?, region: RegionEntry?, beacon: BeaconEntry?
    ) {
        self.request = request
        self.slot = slot
        self.addedSequence = addedSequence
        self.addedTime = addedTime
        self.scope = scope
        self.region = region
        self.beacon = beacon
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

    /// The SPEC §5 condition table for a fix at `point` with accuracy `a` and signed distance `s`.
    @inline(__always)
    func condition(point: Coordinate, accuracy a: Double, signedDistance s: Double) -> RegionStateMachine.Condition {
        let tolerance = boundaryTolerance
        switch mode {
        case .ignore:
            if s <= -enterCushion + tolerance { return .enter }
            return s > exitCushion + tolerance ? .exit : .band
        case .conservative:
            if s + a <= -enterCushion + tolerance { return .enter }
            return s - a > exitCushion + tolerance ? .exit : .band
        case .generous:
            if s - a <= -enterCushion + tolerance { return .enter }
            return s - a > exitCushion + tolerance ? .exit : .band
        case .overlap:
            let share = fence.overlapShare(point: point, accuracy: a, signedDistance: s)
            if share >= enterOverlap { return .enter }
            return share <= exitOverlap ? .exit : .band
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
