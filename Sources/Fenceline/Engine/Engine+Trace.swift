/// Records, for one device and one region request, every step the engine takes for that pair:
/// each fix with its signed distance and condition, each hysteresis timer, the state before and
/// after, and the events delivered. What `fenceline explain` prints; it answers "why no exit?".
///
/// Attach it with ``Engine/trace(_:)`` before the readings; the engine then behaves exactly as
/// without it (the trace only reads state), at the cost of a name comparison per fix.
public final class RegionTracer {
    /// The traced device.
    public let device: String
    /// The traced request's identifier.
    public let request: String
    /// The steps so far, in the order the engine took them.
    public private(set) var steps: [RegionTraceStep] = []
    /// For a beacon request: each sighting of a beacon of its region by the device, and each of
    /// its timers.
    public private(set) var beaconSteps: [BeaconTraceStep] = []
    /// For a time or calendar request: each due time.
    public private(set) var timingSteps: [TimingTraceStep] = []
    /// For a proximity request: each evaluation of a pair the device is in, each fix of the
    /// device that evaluated none, and each of the pairs' timers.
    public private(set) var pairSteps: [PairTraceStep] = []
    /// For a time or calendar request: when it is due next, as the input left it.
    public internal(set) var nextDue: Timestamp?
    /// Events delivered for the pair during the step being recorded.
    var delivered: [Event] = []

    /// Traces `request` for `device`.
    public init(device: String, request: String) {
        self.device = device
        self.request = request
    }

    func record(_ step: RegionTraceStep) {
        var step = step
        step.events = delivered
        delivered.removeAll()
        steps.append(step)
    }

    func record(_ step: BeaconTraceStep) {
        var step = step
        step.events = delivered
        delivered.removeAll()
        beaconSteps.append(step)
    }

    func record(_ step: TimingTraceStep) {
        var step = step
        step.events = delivered
        delivered.removeAll()
        timingSteps.append(step)
    }

    func record(_ step: PairTraceStep) {
        var step = step
        step.events = delivered
        delivered.removeAll()
        pairSteps.append(step)
    }
}

/// One step of a traced device and proximity request: a pair evaluated at a fix of either of
/// its devices, a fix that evaluated no pair, or a pair's timer.
public struct PairTraceStep: Sendable {
    public enum Cause: Sendable {
        /// A fix of the traced device or of the other one (its `device` says which).
        case fix(Fix)
        /// The enter delay ended.
        case enterDelay(due: Timestamp)
        /// The exit delay ended.
        case exitDelay(due: Timestamp)
        /// The older of the two fixes grew older than `maxAge`.
        case ageOut(due: Timestamp)
        /// The request expired, or a device was forgotten (SPEC §12).
        case forcedExit(reason: EventReason, time: Timestamp)
    }

    public var cause: Cause
    /// The pair's other device (the one that is not traced).
    public var other: String?
    /// The distance between the two last fixes, in metres, and how far apart their times are.
    public var distance: Double?
    public var apart: TimeSpan?
    /// `near` (within near, fixes young enough), `band` (between near and far), `far` (beyond
    /// far) or `too old` (fix times more than maxAge apart), for an evaluated pair.
    public var condition: String?
    /// Why nothing was evaluated, when nothing was.
    public var ignored: String?
    public var wasInside = false
    public var isInside = false
    /// The start of a pending delay before and after the step.
    public var pendingBefore: Timestamp?
    public var pending: Timestamp?
    /// Whether the pair is used up (`repeats: false`, already notified).
    public var isDone = false
    /// The events delivered for the pair at this step.
    public var events: [Event] = []

    init(
        cause: Cause, other: String? = nil, distance: Double? = nil, apart: TimeSpan? = nil, ignored: String? = nil,
        wasInside: Bool = false, isInside: Bool = false, pendingBefore: Timestamp? = nil, pending: Timestamp? = nil,
        isDone: Bool = false
    ) {
        self.cause = cause
        self.other = other
        self.distance = distance
        self.apart = apart
        self.ignored = ignored
        self.wasInside = wasInside
        self.isInside = isInside
        self.pendingBefore = pendingBefore
        self.pending = pending
        self.isDone = isDone
    }

    /// Metres as explain prints them.
    static func metres(_ value: Double) -> String { "\(Engine.metres(value)) m" }
}

/// One step of a traced (device, beacon request) pair: a sighting with what smoothing made of
/// it, or a timer.
public struct BeaconTraceStep: Sendable {
    public enum Cause: Sendable {
        /// A sighting of a beacon of the region, with its raw RSSI.
        case sighting(time: Timestamp, beacon: BeaconIdentity, rssi: Double)
        /// The enter delay ended.
        case enterDelay(due: Timestamp)
        /// No counting sighting for the exit timeout.
        case exitTimeout(due: Timestamp)
        /// Sightings stopped counting for the exit delay.
        case exitDelay(due: Timestamp)
    }

    public var cause: Cause
    /// For a sighting: the smoothed RSSI, the distance it gives, its proximity class, and whether
    /// that class counts as inside (is within the request's `proximity`).
    public var report: BeaconReport?
    public var counts: Bool?
    /// Why a sighting changed nothing without being evaluated (scope, `repeats: false`, RSSI 0).
    public var ignored: String?
    public var wasInside: Bool
    public var isInside: Bool
    /// The events delivered for the pair at this step.
    public var events: [Event] = []
}

/// One due time of a traced time or calendar request.
public struct TimingTraceStep: Sendable {
    public var due: Timestamp
    /// Closed by the request's schedule: nothing was delivered (SPEC §7).
    public var muted: Bool
    /// When it is due next, if it is.
    public var next: Timestamp?
    /// The notifications delivered (one per scoped device, or one with no device).
    public var events: [Event] = []
}

/// One step of a traced (device, region request) pair.
public struct RegionTraceStep: Sendable {
    /// What made the engine look at the pair.
    public enum Cause: Sendable {
        /// A fix of the device.
        case fix(Fix)
        /// A fix older than the device's last reading, skipped.
        case staleFix(Fix)
        /// The delay of a transition streak ended.
        case confirmationTimer(due: Timestamp)
        /// A visit's dwell time was reached.
        case dwellTimer(due: Timestamp)
        /// The user answered one of the pair's notifications (its `response` event is the step's).
        case response(ResponseReport)
        /// The request expired, or the device was forgotten (`removeDevice`, `--device-ttl`):
        /// a stay going on ends (SPEC §12).
        case forcedExit(reason: EventReason, time: Timestamp)
    }

    /// Where the engine had the device relative to the region.
    public enum Standing: String, Sendable {
        /// No usable fix since the request was added: the next one sets the state.
        case unknown
        case outside
        case inside
    }

    /// Fixes meeting the condition towards the other side, not yet confirmed.
    public struct Streak: Sendable, Hashable {
        /// The first fix of the streak.
        public var since: Timestamp
        /// How many fixes met the condition so far.
        public var fixes: Int
    }

    public var cause: Cause
    /// The fix's signed distance to the boundary in metres (negative inside).
    public var signedDistance: Double?
    /// The thresholds on `s` at this fix's accuracy: enter when `s ≤ enter`, exit when `s > exit`
    /// (`nil` in `overlap` mode, which compares ``overlapShare`` instead).
    public var limits: (enter: Double, exit: Double)?
    /// In `overlap` mode, the share of the accuracy disc inside the fence.
    public var overlapShare: Double?
    /// `enter`, `exit` or `band` (between the thresholds) for a fix that was evaluated.
    public var condition: String?
    /// Why the fix or timer changed nothing without being evaluated, when it was not.
    public var ignored: String?
    /// The standing before and after the step.
    public var before: Standing
    public var after: Standing
    /// The streak open before the step.
    public var streakBefore: Streak?
    /// The streak open after the step.
    public var streak: Streak?
    /// Whether a dwell timer is running after the step.
    public var awaitsDwell: Bool
    /// Whether the request is used up for the device (`repeats: false`, already notified).
    public var isDone: Bool
    /// The events delivered for the pair at this step.
    public var events: [Event] = []
}

extension Engine {
    /// Records what happens to one device and region request from now on (see ``RegionTracer``).
    public func trace(_ tracer: RegionTracer) {
        self.tracer = tracer
    }

    /// Whether `device` is the traced one.
    @inline(__always)
    func isTraced(device: Int32) -> Bool {
        guard let tracer else { return false }
        return devices.names[Int(device)] == tracer.device
    }

    /// Applies a fix of the traced device, recording the traced request's step around it.
    func applyTraced(_ fix: Fix, device: Int32, tracer: RegionTracer) {
        // A beacon, time or calendar request is traced at its own steps: a fix is not one.
        let traced = liveSlot(ofRequest: tracer.request)
        if let slot = traced, states[Int(slot)].isAlive, requests[Int(slot)].region == nil {
            return apply(fix, device: device)
        }
        guard let slot = traced, states[Int(slot)].isAlive, let region = requests[Int(slot)].region else {
            apply(fix, device: device)
            let reason =
                traced == nil ? "the request is not in the catalog (yet)" : "not a region request, or removed"
            tracer.record(
                RegionTraceStep(
                    cause: .fix(fix), ignored: reason, before: .unknown, after: .unknown, awaitsDwell: false,
                    isDone: false))
            return
        }
        let before = standing(slot: slot, device: device, bucket: region.bucket)
        var step = RegionTraceStep(
            cause: .fix(fix), before: before.standing, after: before.standing, streakBefore: before.streak,
            awaitsDwell: false, isDone: before.isDone)
        let accuracy = fix.accuracy ?? 0
        let hotSlot = flatSlots[Int(slot)]
        let s = region.fence.signedDistance(to: fix.coordinate)
        step.signedDistance = s
        step.limits = hotSlot.limits(accuracy: accuracy)
        if step.limits == nil {
            step.overlapShare = region.fence.overlapShare(point: fix.coordinate, accuracy: accuracy, signedDistance: s)
        }
        if hotSlot.isScoped && !requests[Int(slot)].applies(to: device) {
            step.ignored = "the request is scoped to other devices"
        } else if accuracy > hotSlot.maxAccuracy {
            step.ignored = "accuracy \(accuracy) m is worse than maxAccuracy \(hotSlot.maxAccuracy) m"
        } else if let refusal = filterRefusal(slot: slot, device: device, fix: fix) {
            step.ignored = refusal
        } else if before.isDone {
            step.ignored = "repeats is false and the request already notified this device"
        } else {
            step.condition = "\(regionCondition(slot: slot, hot: hotSlot, point: fix.coordinate, accuracy: accuracy))"
        }
        apply(fix, device: device)
        let after = standing(slot: slot, device: device, bucket: region.bucket)
        step.after = after.standing
        step.streak = after.streak
        step.awaitsDwell = after.awaitsDwell
        step.isDone = after.isDone
        tracer.record(step)
    }

    /// Fires a region timer of the traced pair, recording the step; a dwell timer its visit no
    /// longer awaits (the device exited) fires unrecorded, since it can change nothing.
    func fireTraced(_ timer: EngineTimer, tracer: RegionTracer, fire: () -> Void) {
        if timer.kind == .dwell,
            !(devices.recordIndex(device: timer.device, slot: timer.slot).map {
                devices.records[Int(timer.device)][$0].machine.awaitsDwell(token: timer.token)
            } ?? false)
        {
            return fire()
        }
        let region = requests[Int(timer.slot)].region
        let bucket = region?.bucket ?? 0
        let before = standing(slot: timer.slot, device: timer.device, bucket: bucket)
        fire()
        let after = standing(slot: timer.slot, device: timer.device, bucket: bucket)
        tracer.record(
            RegionTraceStep(
                cause: timer.kind == .dwell ? .dwellTimer(due: timer.due) : .confirmationTimer(due: timer.due),
                before: before.standing, after: after.standing, streakBefore: before.streak, streak: after.streak,
                awaitsDwell: after.awaitsDwell,
                isDone: after.isDone))
    }

    /// Records a response to a notification of the traced pair as a step of its own (it changes
    /// no standing), so that its event is not held for the pair's next fix.
    func traceResponse(_ report: ResponseReport, tracer: RegionTracer) {
        var standing:
            (standing: RegionTraceStep.Standing, streak: RegionTraceStep.Streak?, awaitsDwell: Bool, isDone: Bool) =
                (.unknown, nil, false, false)
        if let slot = liveSlot(ofRequest: tracer.request), let region = requests[Int(slot)].region,
            let device = devices.id(of: tracer.device)
        {
            standing = self.standing(slot: slot, device: device, bucket: region.bucket)
        }
        tracer.record(
            RegionTraceStep(
                cause: .response(report), before: standing.standing, after: standing.standing,
                streakBefore: standing.streak, streak: standing.streak, awaitsDwell: standing.awaitsDwell,
                isDone: standing.isDone))
    }

    /// Whether a region timer belongs to the traced pair.
    func isTraced(_ timer: EngineTimer) -> RegionTracer? {
        guard let tracer, timer.kind == .confirmation || timer.kind == .dwell, isTraced(device: timer.device),
            liveSlot(ofRequest: tracer.request) == timer.slot
        else { return nil }
        return tracer
    }

    private func standing(slot: Int32, device: Int32, bucket: Int) -> (
        standing: RegionTraceStep.Standing, streak: RegionTraceStep.Streak?, awaitsDwell: Bool, isDone: Bool
    ) {
        if let index = devices.recordIndex(device: device, slot: slot) {
            let record = devices.records[Int(device)][index]
            return (
                record.machine.isInside ? .inside : .outside,
                record.machine.pendingStreak.map { RegionTraceStep.Streak(since: $0.since, fixes: $0.fixes) },
                record.machine.awaitsDwell, record.isDone
            )
        }
        let known = devices.hasAcceptedFix(
            device: device, bucket: bucket, after: requests[Int(slot)].addedSequence, slot: slot)
        return (known ? .outside : .unknown, nil, false, false)
    }
}
