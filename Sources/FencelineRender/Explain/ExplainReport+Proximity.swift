public import Fenceline
import FencelineFormats

/// `explain` for proximity requests (SPEC §12): each pair the device is in, evaluated at a fix of
/// either device (distance, how far apart the fix times are, the condition), and each timer.
extension ExplainReport {
    /// - Parameter everyFix: list every fix; by default a run of fixes that evaluated no pair for
    ///   the same reason shows as its first row and a count.
    static func proximityReport(
        request: NotificationRequest, trigger: ProximityTrigger, tracer: RegionTracer, written: [Event],
        everyFix: Bool
    ) -> String {
        let among = trigger.among.map(\.text).joined(separator: ", ")
        let to = trigger.to.map { $0.map(\.text).joined(separator: ", ") } ?? "any other device of among"
        var rules =
            "  enter within \(JSONWriter.format(trigger.near)) m, exit beyond \(JSONWriter.format(trigger.far)) m"
        if let maxAge = trigger.maxAge {
            rules += "; fixes at most \(JSONWriter.format(maxAge.seconds)) s apart, a pair ages out after that"
        }
        var lines = [
            "Request \"\(request.id)\" (proximity: among \(among); to \(to)) for device \"\(tracer.device)\"",
            rules,
            "  enter delay \(JSONWriter.format(trigger.enterDelay.seconds)) s, exit delay "
                + "\(JSONWriter.format(trigger.exitDelay.seconds)) s; repeats \(trigger.repeats)",
        ]
        guard !tracer.pairSteps.isEmpty else {
            lines += ["", "No fix of device \"\(tracer.device)\" (or of a device paired with it) was read."]
            return lines.joined(separator: "\n") + "\n"
        }
        var unnumbered = written
        var rows = [["time", "step", "other", "distance (m)", "apart (s)", "condition", "standing", "what happened"]]
        var standings: [String: Bool] = [:]
        // Rows standing for a run of fixes like them: how many more, and the last one's time.
        var repeated: [Int: (count: Int, until: String)] = [:]
        for step in tracer.pairSteps {
            let standing =
                step.other == nil
                ? ""
                : step.wasInside == step.isInside
                    ? (step.isInside ? "inside" : "outside")
                    : "\(step.wasInside ? "inside" : "outside") → \(step.isInside ? "inside" : "outside")"
            if let other = step.other { standings[other] = step.isInside }
            var notes: [String] = []
            let time: Timestamp
            let name: String
            switch step.cause {
            case .fix(let fix):
                time = fix.time
                name = fix.device == tracer.device ? "fix" : "fix of \(fix.device)"
            case .enterDelay(let due):
                (time, name) = (due, "enter delay over")
                notes.append(step.isInside ? "within near throughout: confirmed" : "a fix aged past maxAge")
            case .exitDelay(let due):
                (time, name) = (due, "exit delay over")
                notes.append("beyond far throughout: confirmed")
            case .ageOut(let due):
                (time, name) = (due, "age-out")
                notes.append("the older fix is more than maxAge old")
            case .forcedExit(let reason, let at):
                (time, name) = (at, reason == .removed ? "device removed" : "expired")
            }
            if let ignored = step.ignored {
                notes.append("ignored: \(ignored)")
            } else if let since = step.pending, step.pendingBefore == nil {
                notes.append(
                    "\(step.isInside ? "exit" : "enter") delay starts (since \(since.rfc3339))")
            } else if step.pendingBefore != nil && step.pending == nil && step.wasInside == step.isInside {
                notes.append("\(step.isInside ? "exit" : "enter") delay cancelled")
            }
            notes += notified(step.events, from: &unnumbered)
            if step.events.isEmpty && step.wasInside != step.isInside {
                notes.append(
                    "not notified (notifyOn\(step.isInside ? "Entry" : "Exit") false, or muted by the schedule)")
            }
            let row = [
                time.rfc3339, name, step.other ?? "",
                step.distance.map { JSONWriter.format(($0 * 10).rounded() / 10) } ?? "",
                step.apart.map { JSONWriter.format($0.seconds) } ?? "", step.condition ?? "", standing,
                notes.joined(separator: "; "),
            ]
            if !everyFix, step.other == nil, let last = rows.last, Array(last[1...]) == Array(row[1...]) {
                // The same nothing again: counted on the run's first row.
                repeated[rows.count - 1, default: (0, "")] = ((repeated[rows.count - 1]?.count ?? 0) + 1, row[0])
                continue
            }
            rows.append(row)
        }
        for (index, run) in repeated { rows[index][7] += " (and \(run.count) more until \(run.until))" }
        lines.append("")
        lines += table(rows, right: [3, 4])
        lines.append("")
        let inside = standings.filter(\.value).keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        lines.append(
            inside.isEmpty
                ? "At the end the device is in no pair."
                : "At the end the device is near: \(inside.joined(separator: ", ")).")
        return lines.joined(separator: "\n") + "\n"
    }
}
