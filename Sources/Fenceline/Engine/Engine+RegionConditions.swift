import Foundation

/// Whether a fix meets a region request's enter or exit condition (SPEC §5), measured through the
/// flat slot, its certificate and the fence's margin.
extension Engine {
    /// The condition of a circle or polygon fence (`ignore` mode) for a tracked pair, reusing the
    /// record's certificate when the fix lies inside it and renewing it otherwise.
    ///
    /// The state machine only asks whether a fix meets the condition towards the other side (exit
    /// while inside, enter while outside), so the certificate guards that one threshold: a fix
    /// deep inside may wander into the band and back without a new measurement.
    func certifiedCondition(
        hot: borrowing HotSlot, point: Coordinate, record: inout DeviceTable.RegionRecord
    ) -> RegionStateMachine.Condition {
        if record.certificateHolds(point, epoch: requestEpoch) { return record.safeCondition }
        let isInside = record.machine.isInside
        let (enter, exit) = hot.limits(accuracy: 0)!  // `ignore` mode: no accuracy term
        // How far the fix is from the threshold the machine watches.
        let threshold = isInside ? exit : enter
        let condition: RegionStateMachine.Condition
        var margin: Double
        if hot.shape == .circle {
            // One measurement serves the condition and the margin.
            if let approximate = hot.circle.approximateDistance(to: point) {
                condition = Self.circleCondition(
                    hot.circle, approximate: approximate, point: point, enter: enter, exit: exit)
                // Within 3 cm of the haversine distance the condition is decided by.
                margin = abs(approximate - hot.circle.radius - threshold) - 0.1
            } else {
                let s = hot.circle.signedDistance(to: point)
                condition = Self.condition(snappedToBoundary(s), enter: enter, exit: exit)
                margin = abs(s - threshold) - 0.01
            }
        } else {
            let reach = max(abs(enter), abs(exit)) + 50
            let (inside, distance) = polygonContainment(hot, of: point, measuringWithin: reach)
            let s = signedDistance(inside: inside, distance: distance)
            condition = Self.condition(s, enter: enter, exit: exit)
            // Beyond reach, `s` is only known to be below -reach (inside) or above +reach.
            margin = s.isFinite ? abs(s - threshold) : max(0, inside ? threshold + reach : reach - threshold)
        }
        // At most a kilometre, and none near the poles: the disc's local projection is padded for
        // that (as for the devices' safe discs), not for the kilometres a large circle or a large
        // cushion gives.
        margin = abs(point.latitude) > 80 ? 0 : min(margin, 1000)
        record.safe = DeviceTable.SafeDisc(
            center: point, radius: margin > 1 && usesCertificates ? margin - 1 : 0, epoch: requestEpoch)
        record.safeCondition = condition
        record.safeInside = isInside
        record.safeAccuracy = hot.maxAccuracy
        record.safeExitDelay = hot.rules.exitDelay
        record.safeMinFixes = hot.rules.minFixes
        return condition
    }

    /// ``PolygonShape/containment(of:measuringWithin:)`` of the polygon in a slot, read through
    /// its block when it has one.
    @inline(__always)
    func polygonContainment(_ hot: borrowing HotSlot, of point: Coordinate, measuringWithin limit: Double) -> (
        inside: Bool, distance: Double
    ) {
        if let block = hot.polygonBlock { return block.containment(of: point, measuringWithin: limit) }
        return polygons[hot.polygon].containment(of: point, measuringWithin: limit)
    }

    /// The condition of a signed distance `s` under the thresholds `enter` (met when `s ≤ enter`)
    /// and `exit` (met when `s > exit`), each with the boundary tolerance.
    @inline(__always)
    static func condition(_ s: Double, enter: Double, exit: Double) -> RegionStateMachine.Condition {
        if s <= enter + boundaryTolerance { return .enter }
        return s > exit + boundaryTolerance ? .exit : .band
    }

    /// The SPEC §5 condition of a fix for the region in `slot`, from its flat values.
    ///
    /// The three distance modes are thresholds on `s` (`HotSlot.limits`), and the exact `s` is
    /// computed only when it matters: a circle is first measured by a local projection (within
    /// 3 cm) and by haversine only within 10 cm of a threshold; a polygon measures only the edges
    /// within reach of a threshold.
    @inline(__always)
    func regionCondition(slot: Int32, hot: borrowing HotSlot, point: Coordinate, accuracy: Double)
        -> RegionStateMachine.Condition
    {
        guard let limits = hot.limits(accuracy: accuracy) else {
            let region = requests[Int(slot)].region!
            let s = region.fence.signedDistance(to: point)
            let share = region.fence.overlapShare(point: point, accuracy: accuracy, signedDistance: s)
            if share >= region.enterOverlap { return .enter }
            return share <= region.exitOverlap ? .exit : .band
        }
        func classify(_ s: Double) -> RegionStateMachine.Condition {
            Self.condition(s, enter: limits.enter, exit: limits.exit)
        }
        switch hot.shape {
        case .circle:
            return Self.circleCondition(
                hot.circle, approximate: hot.circle.approximateDistance(to: point), point: point, enter: limits.enter,
                exit: limits.exit)
        case .polygon:
            let (inside, distance) = polygonContainment(
                hot,
                of: point, measuringWithin: max(abs(limits.enter), abs(limits.exit)) + 1)
            return classify(signedDistance(inside: inside, distance: distance))
        case .other, .none:
            return classify(requests[Int(slot)].region!.fence.signedDistance(to: point))
        }
    }

    /// A circle's condition under the thresholds `enter` and `exit` on `s`, from its `approximate`
    /// centre distance (``CircleShape/approximateDistance(to:)``, within 3 cm) unless that lies
    /// within 10 cm of a threshold, when the exact distance decides.
    @inline(__always)
    static func circleCondition(
        _ circle: CircleShape, approximate: Double?, point: Coordinate, enter: Double, exit: Double
    ) -> RegionStateMachine.Condition {
        if let approximate {
            let s = approximate - circle.radius
            if s <= enter - 0.1 { return .enter }
            if s > exit + 0.1 { return .exit }
            if s > enter + 0.1 && s <= exit - 0.1 { return .band }
        }
        return condition(snappedToBoundary(circle.signedDistance(to: point)), enter: enter, exit: exit)
    }

    /// The condition of a polygon (not in `overlap` mode) and its `enterMargin`, from one
    /// measurement within the reach the condition needs and 60 m beyond.
    ///
    /// The margin is known only within that reach, and it bounds the device's safe disc: a reach
    /// just past the thresholds would let every polygon whose box holds a fix it is outside of
    /// shrink the disc to a few tens of metres, and the next fixes would query the index again.
    func polygonConditionAndMargin(hot: borrowing HotSlot, point: Coordinate, accuracy: Double) -> (
        condition: RegionStateMachine.Condition, margin: Double
    ) {
        let limits = hot.limits(accuracy: accuracy)!
        let reach = max(abs(limits.enter), abs(limits.exit)) + 60
        let (inside, distance) = polygonContainment(hot, of: point, measuringWithin: reach)
        let s = signedDistance(inside: inside, distance: distance)
        let condition = Self.condition(s, enter: limits.enter, exit: limits.exit)
        let margin: Double
        switch hot.mode {
        case .ignore, .conservative:
            // Beyond reach the distance is only known to exceed it.
            let bound = inside ? s : min(s, reach)
            margin = max(0, bound + hot.enterCushion - 0.01)
        case .generous, .overlap:
            margin = 0
        }
        return (condition, margin)
    }

    /// A lower bound of the metres `point` may move before the region in `slot` could meet its
    /// enter condition at any accuracy: `s` minus the loosest enter limit, which for the `ignore`
    /// and `conservative` modes is `-enterCushion` (accuracy only tightens the latter); 0 for the
    /// modes whose limit grows with accuracy (safe discs are not used with those).
    func enterMargin(slot: Int32, hot: borrowing HotSlot, point: Coordinate) -> Double {
        switch hot.mode {
        case .ignore, .conservative: break
        case .generous, .overlap: return 0
        }
        let enter = -hot.enterCushion
        let s: Double
        switch hot.shape {
        case .circle:
            if let approximate = hot.circle.approximateDistance(to: point) {
                s = approximate - hot.circle.radius - 0.05
            } else {
                s = hot.circle.signedDistance(to: point)
            }
        case .polygon:
            // Far from the polygon its box gives the bound; near it, the edges within reach.
            let box = polygons[hot.polygon].boxDistance(to: point)
            if box > 0 {
                s = box
            } else {
                let reach = 60 + abs(enter)
                let (inside, distance) = polygonContainment(hot, of: point, measuringWithin: reach)
                s = inside ? -distance : min(distance, reach)
            }
        case .other:
            s = requests[Int(slot)].region!.fence.signedDistance(to: point)
        case .none:
            return .infinity
        }
        return max(0, s - enter - 0.01)
    }
}
