/// A live proximity request and its state.
struct ProximityBinding {
    let slot: Int32
    let state: ProximityState
}

/// Device proximity (SPEC §12): pairs of devices entering when their last fixes come within
/// `near` metres, exiting beyond `far` or when one fix ages past `maxAge`.
extension Engine {
    /// Evaluates every proximity request for a fix of `device` (after its region requests).
    func applyProximity(_ fix: Fix, device: Int32) {
        for binding in proximity {
            evaluateProximity(fix, device: device, slot: binding.slot, state: binding.state)
        }
    }

    /// Which of the request's lists `device` matches, worked out at its first fix.
    func proximityRole(of device: Int32, slot: Int32, state: ProximityState) -> ProximityState.Role {
        let known = state[device].role
        if known.contains(.known) { return known }
        var role = ProximityState.Role.known
        if requests[Int(slot)].applies(to: device) {
            let name = devices.names[Int(device)]
            let among = state.trigger.among.contains { $0.matches(name) }
            if among { role.insert(.among) }
            if state.trigger.to.map({ $0.contains { $0.matches(name) } }) ?? among { role.insert(.to) }
        }
        state[device].role = role
        return role
    }

    private func evaluateProximity(_ fix: Fix, device: Int32, slot: Int32, state: ProximityState) {
        state.ensure(device)
        let role = proximityRole(of: device, slot: slot, state: state)
        let traced = tracer.flatMap { $0.request == requests[Int(slot)].id && isTraced(device: device) ? $0 : nil }
        guard role.pairs else {
            traced?.record(PairTraceStep(cause: .fix(fix), ignored: "the device matches neither among nor to"))
            return
        }
        var refreshOnly = false
        if !state.filters.isEmpty {
            let member = state[device]
            let reference = DeviceTable.AcceptedFix(
                sequence: member.hasFix ? 1 : 0, coordinate: member.coordinate, time: member.time)
            let verdict = Self.judge(fix, reference: reference, filters: state.filters, lead: fixLead)
            if verdict == .drop || verdict == .refresh {
                if !fixFiltered {
                    statistics.filtered += 1
                    fixFiltered = true
                }
                if verdict == .drop {
                    traced?.record(
                        PairTraceStep(
                            cause: .fix(fix),
                            ignored: filterRefusal(filters: state.filters, reference: reference, fix: fix)
                                ?? "filtered"))
                    return
                }
                refreshOnly = true
            }
        }
        let previous = state[device].hasFix ? state[device].time : nil
        if refreshOnly {
            state.refresh(device, time: fix.time)
        } else {
            state.move(device, to: fix.coordinate, time: fix.time)
        }
        let member = state[device]
        let near = state.trigger.near
        let maxAge = state.trigger.maxAge
        let partners = state.partners(of: device)
        // A set when there are many, so that each candidate's check stays short.
        let partnerSet = partners.count > 8 ? Set(partners) : nil
        pairScratch.removeAll(keepingCapacity: true)
        pairScratch.append(contentsOf: partners)
        // Devices not yet paired with this one matter only if the pair would enter now.
        state.work.fixes += 1
        state.forEachDevice(near: member.coordinate) { other in
            guard other != device else { return }
            let candidate = state[other]
            guard role.pairs(with: candidate.role) else { return }
            if let maxAge, Self.apart(member.time, candidate.time) > maxAge {
                // Too old to pair with any fix to come, until it reports again.
                if !candidate.isPaired { state.evict(other) }
                return
            }
            guard !(partnerSet?.contains(other) ?? partners.contains(other)),
                member.coordinate.distance(to: candidate.coordinate) <= near + boundaryTolerance
            else { return }
            if state.isDone(device, other) {
                traced?.record(
                    PairTraceStep(
                        cause: .fix(fix), other: devices.names[Int(other)],
                        ignored: "repeats is false and the request already notified this pair", isDone: true))
                return
            }
            pairScratch.append(other)
        }
        if pairScratch.isEmpty {
            traced?.record(
                PairTraceStep(
                    cause: .fix(fix),
                    ignored: refreshOnly
                        ? "a refresh (minDistance): no pair to evaluate"
                        : "no device that may pair with it is within near (\(PairTraceStep.metres(near)))"))
            return
        }
        // In name order, so a device entering several pairs at once numbers its visits the same
        // whatever order the grid holds them in.
        if pairScratch.count > 1 {
            pairScratch.sort { DeviceNames.precedes(devices.names[Int($0)], devices.names[Int($1)]) }
        }
        let others = pairScratch
        state.work.pairsEvaluated += others.count
        for other in others {
            evaluatePair(device, other, slot: slot, state: state, at: fix.time, previous: previous, cause: .fix(fix))
        }
    }

    /// What finding pairs has cost so far (SPEC §12: pairs are found through a spatial index of
    /// the devices' last positions, never by checking every pair), so a run can show it.
    public struct ProximityWork: Hashable, Sendable {
        /// Fixes that looked for pairs in the grid.
        public var fixes = 0
        /// Devices the grid's cells around those fixes held, each a possible pair looked at.
        public var devicesLookedAt = 0
        /// Pairs evaluated: the fix's own pairs and the new ones within `near`.
        public var pairsEvaluated = 0
    }

    /// The grid work of every live proximity request since this engine was made or resumed.
    public var proximityWork: ProximityWork {
        proximity.reduce(into: ProximityWork()) { total, binding in
            total.fixes += binding.state.work.fixes
            total.devicesLookedAt += binding.state.work.devicesLookedAt
            total.pairsEvaluated += binding.state.work.pairsEvaluated
        }
    }

    /// How far apart two fix times are.
    static func apart(_ a: Timestamp, _ b: Timestamp) -> TimeSpan {
        TimeSpan(microseconds: abs(a.microseconds - b.microseconds))
    }

    /// The pair's devices in its orientation: `device` matches `among` and `other` matches `to`;
    /// when both match both, `device` is the one first in byte order.
    func orient(_ a: Int32, _ b: Int32, state: ProximityState) -> (device: Int32, other: Int32) {
        let first = state[a].role
        let second = state[b].role
        let forward = first.contains(.among) && second.contains(.to)
        let backward = second.contains(.among) && first.contains(.to)
        if forward && backward {
            return DeviceNames.precedes(devices.names[Int(a)], devices.names[Int(b)]) ? (a, b) : (b, a)
        }
        return forward ? (a, b) : (b, a)
    }

    /// Evaluates the pair of `a` (whose fix this is, its previous one at `previous`) and `b` with
    /// both last fixes.
    private func evaluatePair(
        _ a: Int32, _ b: Int32, slot: Int32, state: ProximityState, at time: Timestamp, previous: Timestamp?,
        cause: PairTraceStep.Cause
    ) {
        let (device, other) = orient(a, b, state: state)
        let key = ProximityState.pairKey(device: device, other: other)
        var pair = state.pairs[key] ?? ProximityState.Pair()
        let traced = tracedPair(slot: slot, device: device, other: other)
        let first = state[device]
        let second = state[other]
        let distance = first.coordinate.distance(to: second.coordinate)
        let apart = Self.apart(first.time, second.time)
        let trigger = state.trigger
        var step = traced.map { _ in
            PairTraceStep(
                cause: cause, other: devices.names[Int(traced!.device == devices.names[Int(device)] ? other : device)],
                distance: distance, apart: apart, wasInside: pair.inside, isInside: pair.inside,
                pendingBefore: pair.candidateSince)
        }
        guard !pair.isDone else {
            step?.ignored = "repeats is false and the request already notified this pair"
            if let step { traced?.record(step) }
            return
        }
        pair.distance = distance
        let tooOld = trigger.maxAge.map { apart > $0 } ?? false
        // Within a micrometre of `near` or `far` is on it, as for a fence's boundary: a pair
        // placed exactly `near` apart is not left out by rounding.
        let isNear = distance <= trigger.near + boundaryTolerance
        let isFar = distance > trigger.far + boundaryTolerance
        let within = isNear && !tooOld
        step?.condition = tooOld ? "too old" : isNear ? "near" : isFar ? "far" : "band"
        if !pair.inside, pair.candidateSince != nil, let maxAge = trigger.maxAge, let previous,
            min(previous, state[b].time).advanced(by: maxAge) < time
        {
            // A fix aged past maxAge since the last evaluation: the enter condition did not hold
            // throughout, so the delay starts again (if it holds now).
            pair.candidateSince = nil
        }
        if !pair.inside {
            if !within {
                pair.candidateSince = nil
            } else if pair.candidateSince == nil {
                if trigger.enterDelay > .zero {
                    startDelay(
                        .pairEnter, trigger.enterDelay, &pair, slot: slot, device: device, other: other, at: time)
                } else {
                    enterPair(
                        &pair, slot: slot, state: state, device: device, other: other, since: time, at: time,
                        reason: .observed)
                }
            }
        } else if !isFar {
            pair.candidateSince = nil
        } else if pair.candidateSince == nil {
            if trigger.exitDelay > .zero {
                startDelay(.pairExit, trigger.exitDelay, &pair, slot: slot, device: device, other: other, at: time)
            } else {
                exitPair(
                    &pair, slot: slot, state: state, device: device, other: other, since: time, at: time,
                    reason: .observed)
            }
        }
        state.store(pair, device: device, other: other)
        if var step {
            step.isInside = pair.inside
            step.pending = pair.candidateSince
            step.isDone = pair.isDone
            traced?.record(step)
        }
    }

    /// Opens the pair's enter or exit delay at `time`, its timer due `delay` later.
    private func startDelay(
        _ kind: EngineTimer.Kind, _ delay: TimeSpan, _ pair: inout ProximityState.Pair, slot: Int32, device: Int32,
        other: Int32, at time: Timestamp
    ) {
        pair.candidateSince = time
        pair.token = makeToken()
        timers.schedule(
            kind, due: time.advanced(by: delay), setAt: clock, slot: slot, device: device, other: other,
            token: pair.token)
    }

    /// The pair enters: a new stay, its age-out timer, and the event when the trigger notifies.
    private func enterPair(
        _ pair: inout ProximityState.Pair, slot: Int32, state: ProximityState, device: Int32, other: Int32,
        since: Timestamp, at time: Timestamp, reason: EventReason
    ) {
        let entry = requests[Int(slot)]
        pair.inside = true
        pair.candidateSince = nil
        pair.token = 0
        // Every stay counts, notified or not; numbered per (request, device) over all its pairs.
        pair.visit = nextVisit(request: entry.id, device: device)
        pair.staySince = since
        if let maxAge = state.trigger.maxAge {
            pair.ageToken = makeToken()
            let older = min(state[device].time, state[other].time)
            timers.schedule(
                .pairAge, due: older.advanced(by: maxAge), setAt: clock, slot: slot, device: device, other: other,
                token: pair.ageToken)
        }
        guard state.trigger.notifyOnEntry else { return }
        emitPair(
            .enter, pair: &pair, entry: entry, state: state, device: device, other: other, since: since, at: time,
            reason: reason, visit: pair.visit, duration: nil)
    }

    /// The pair exits: the stay ends, its timers are void, and the event when the trigger notifies.
    private func exitPair(
        _ pair: inout ProximityState.Pair, slot: Int32, state: ProximityState, device: Int32, other: Int32,
        since: Timestamp, at time: Timestamp, reason: EventReason
    ) {
        let visit = pair.visit
        let duration = visit > 0 ? TimeSpan(microseconds: time.microseconds - pair.staySince.microseconds) : nil
        pair.inside = false
        pair.candidateSince = nil
        pair.token = 0
        pair.ageToken = 0
        pair.visit = 0
        guard state.trigger.notifyOnExit else { return }
        emitPair(
            .exit, pair: &pair, entry: requests[Int(slot)], state: state, device: device, other: other,
            since: since, at: time, reason: reason, visit: visit, duration: duration)
    }

    private func emitPair(
        _ kind: EventKind, pair: inout ProximityState.Pair, entry: RequestEntry, state: ProximityState, device: Int32,
        other: Int32, since: Timestamp, at time: Timestamp, reason: EventReason, visit: Int32, duration: TimeSpan?
    ) {
        let event = makeEvent(
            kind, for: entry, device: devices.names[Int(device)], time: time, since: since,
            position: Position(coordinate: state[device].coordinate), distance: pair.distance,
            reason: reason, visit: visit, duration: duration, other: devices.names[Int(other)])
        guard deliver(event, for: entry, device: device) else { return }
        if !state.trigger.repeats { pair.isDone = true }
    }

    /// Fires a pair's timer: an enter delay, an exit delay, or its older fix's age limit.
    func firePair(_ timer: EngineTimer) {
        guard states[Int(timer.slot)].isAlive,
            let state = proximity.first(where: { $0.slot == timer.slot })?.state
        else { return }
        let key = ProximityState.pairKey(device: timer.device, other: timer.other)
        guard var pair = state.pairs[key], !pair.isDone else { return }
        let traced = tracedPair(slot: timer.slot, device: timer.device, other: timer.other)
        let wasInside = pair.inside
        let pendingBefore = pair.candidateSince
        let older = min(state[timer.device].time, state[timer.other].time)
        let cause: PairTraceStep.Cause
        switch timer.kind {
        case .pairEnter:
            guard !pair.inside, pair.token == timer.token, let since = pair.candidateSince else { return }
            cause = .enterDelay(due: timer.due)
            if let maxAge = state.trigger.maxAge, older.advanced(by: maxAge) < timer.due {
                // A fix aged past maxAge while the delay ran: the condition no longer held.
                pair.candidateSince = nil
                pair.token = 0
            } else {
                enterPair(
                    &pair, slot: timer.slot, state: state, device: timer.device, other: timer.other,
                    since: since, at: timer.due, reason: .delayed)
            }
        case .pairExit:
            guard pair.inside, pair.token == timer.token, let since = pair.candidateSince else { return }
            cause = .exitDelay(due: timer.due)
            exitPair(
                &pair, slot: timer.slot, state: state, device: timer.device, other: timer.other, since: since,
                at: timer.due, reason: .delayed)
        default:
            guard pair.inside, pair.ageToken == timer.token, let maxAge = state.trigger.maxAge else { return }
            let due = older.advanced(by: maxAge)
            if due > timer.due {
                // A newer fix of the older device: the limit moved on (a fix stamped exactly at
                // the due time keeps the pair).
                timers.schedule(
                    .pairAge, due: due, setAt: clock, slot: timer.slot, device: timer.device, other: timer.other,
                    token: timer.token)
                return
            }
            cause = .ageOut(due: timer.due)
            exitPair(
                &pair, slot: timer.slot, state: state, device: timer.device, other: timer.other, since: older,
                at: timer.due, reason: .timeout)
        }
        state.store(pair, device: timer.device, other: timer.other)
        if let traced {
            let other = traced.device == devices.names[Int(timer.device)] ? timer.other : timer.device
            traced.record(
                PairTraceStep(
                    cause: cause, other: devices.names[Int(other)], distance: pair.distance, wasInside: wasInside,
                    isInside: pair.inside, pendingBefore: pendingBefore, pending: pair.candidateSince,
                    isDone: pair.isDone))
        }
    }

    /// Exits every inside pair of `device` (of the request in `onlySlot`, or of all) at `time`.
    func forceProximityExits(device: Int32, reason: EventReason, at time: Timestamp, onlySlot: Int32?) {
        for binding in proximity where onlySlot == nil || binding.slot == onlySlot {
            let state = binding.state
            guard Int(device) < state.memberCount else { continue }
            for partner in state.partners(of: device) {
                let (first, second) = orient(device, partner, state: state)
                let key = ProximityState.pairKey(device: first, other: second)
                guard var pair = state.pairs[key], pair.inside, !pair.isDone else { continue }
                let wasInside = pair.inside
                exitPair(
                    &pair, slot: binding.slot, state: state, device: first, other: second, since: time, at: time,
                    reason: reason)
                // Stored as any evaluation stores it: an idle pair goes, a used-up one to the done set
                // (the loop walks a copy of the partner list).
                state.store(pair, device: first, other: second)
                if let traced = tracedPair(slot: binding.slot, device: first, other: second) {
                    let named = traced.device == devices.names[Int(first)] ? second : first
                    traced.record(
                        PairTraceStep(
                            cause: .forcedExit(reason: reason, time: time), other: devices.names[Int(named)],
                            distance: pair.distance, wasInside: wasInside, isInside: false, isDone: pair.isDone))
                }
            }
        }
    }

    /// The tracer, when the pair belongs to the traced request and device.
    private func tracedPair(slot: Int32, device: Int32, other: Int32) -> RegionTracer? {
        guard let tracer, tracer.request == requests[Int(slot)].id,
            devices.names[Int(device)] == tracer.device || devices.names[Int(other)] == tracer.device
        else { return nil }
        return tracer
    }
}
