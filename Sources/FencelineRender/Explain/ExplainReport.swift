public import Fenceline
import FencelineFormats

/// The text of `fenceline explain`: the rules of one region request, the timeline of one device's
/// fixes and hysteresis timers against it, and a closing diagnosis of the current standing
/// ("why no exit?").
public enum ExplainReport {
    /// Renders the trace of `tracer` for `request`; `written` are the traced pair's events as the
    /// run wrote them, whose numbers the timeline shows (events of one instant are written in
    /// SPEC §4 order, which may differ from the order they were produced in).
    /// - Parameter everyFix: list every fix; by default a run of fixes that change nothing and
    ///   meet the same condition shows as its first row and a count.
    ///
    /// Meant for a terminal: control characters read from the input (in ids, device names, titles)
    /// are escaped line by line (see `String.terminalSafe`).
    public static func render(
        request: NotificationRequest, tracer: RegionTracer, written: [Event], everyFix: Bool = false
    ) -> String {
        report(request: request, tracer: tracer, written: written, everyFix: everyFix)
            .split(separator: "\n", omittingEmptySubsequences: false).map { String($0).terminalSafe }
            .joined(separator: "\n")
    }

    private static func report(
        request: NotificationRequest, tracer: RegionTracer, written: [Event], everyFix: Bool
    ) -> String {
        let trigger: RegionTrigger
        switch request.trigger {
        case .region(let region): trigger = region
        case .beacon(let beacon):
            return beaconReport(request: request, trigger: beacon, tracer: tracer, written: written)
        case .timeInterval, .calendar:
            return timingReport(request: request, tracer: tracer, written: written)
        case .proximity(let proximity):
            return proximityReport(
                request: request, trigger: proximity, tracer: tracer, written: written, everyFix: everyFix)
        }
        var lines = header(request: request, trigger: trigger, tracer: tracer)
        let rows =
            everyFix
            ? timeline(trigger: trigger, tracer: tracer, written: written)
            : collapsed(timeline(trigger: trigger, tracer: tracer, written: written), steps: tracer.steps)
        if rows.isEmpty {
            lines.append("")
            lines.append("No fix of device \"\(tracer.device)\" was read.")
            return lines.joined(separator: "\n") + "\n"
        }
        let table = [["time", "step", "s (m)", "acc (m)", "condition", "standing", "what happened"]] + rows
        let widths = (0..<6).map { column in table.map { $0[column].count }.max() ?? 0 }
        lines.append("")
        for row in table {
            var text = ""
            for column in 0..<6 {
                let cell = row[column]
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
                text += column == 2 || column == 3 ? padding + cell : cell + padding
                text += "  "
            }
            text += row[6]
            lines.append(text.trimmingTrailingSpaces)
        }
        lines.append("")
        lines.append(contentsOf: diagnosis(trigger: trigger, tracer: tracer))
        return lines.joined(separator: "\n") + "\n"
    }

    private static func header(request: NotificationRequest, trigger: RegionTrigger, tracer: RegionTracer) -> [String] {
        let h = trigger.hysteresis
        let shape: String
        switch trigger.geometry {
        case .circle(_, let radius): shape = "circle of radius \(metres(radius)) m"
        case .polygons(let polygons):
            let vertices = polygons.reduce(0) { $0 + $1.reduce(0) { $0 + max(0, $1.count - 1) } }
            shape =
                polygons.count == 1
                ? "polygon, \(vertices) vertices" : "\(polygons.count) polygons, \(vertices) vertices"
        case .corridor(let path, let width): shape = "corridor \(metres(width)) m wide along \(path.count) points"
        }
        var rules: String
        switch h.accuracy {
        case .ignore: rules = "enter when s ≤ \(signed(-h.enterCushion)) m, exit when s > \(signed(h.exitCushion)) m"
        case .conservative:
            rules =
                "enter when s + a ≤ \(signed(-h.enterCushion)) m, exit when s − a > \(signed(h.exitCushion)) m (a: accuracy)"
        case .generous:
            rules =
                "enter when s − a ≤ \(signed(-h.enterCushion)) m, exit when s − a > \(signed(h.exitCushion)) m (a: accuracy)"
        case .overlap:
            rules =
                "enter when ≥ \(Int(h.enterOverlap * 100)) % of the accuracy disc is inside, exit when ≤ \(Int(h.exitOverlap * 100)) %"
        }
        var timing = "enter delay \(seconds(h.enterDelay)), exit delay \(seconds(h.exitDelay)), min fixes \(h.minFixes)"
        if let maximum = h.maxAccuracy { timing += ", fixes worse than \(metres(maximum)) m ignored" }
        var notifies = [String]()
        if trigger.notifyOnEntry { notifies.append("enter") }
        if trigger.notifyOnExit { notifies.append("exit") }
        if trigger.notifyOnDwell, let dwell = trigger.dwell { notifies.append("dwell after \(seconds(dwell))") }
        if trigger.notifyOnCross { notifies.append("cross") }
        var lines = [
            "Request \"\(request.id)\" (\(shape)) for device \"\(tracer.device)\"",
            "  s is the signed distance to the boundary, negative inside; \(rules)",
            "  \(timing); initial \(trigger.initial.rawValue); repeats \(trigger.repeats)",
            "  notifies: \(notifies.isEmpty ? "nothing" : notifies.joined(separator: ", "))",
        ]
        let filters = request.filters
        if !filters.isEmpty {
            var checks: [String] = []
            if let speed = filters.maxSpeed { checks.append("faster than \(metres(speed)) m/s dropped") }
            if let distance = filters.minDistance { checks.append("closer than \(metres(distance)) m only refreshes") }
            if let lead = filters.maxFuture { checks.append("over \(seconds(lead)) ahead of the clock dropped") }
            lines.append("  filters, from its last accepted fix: " + checks.joined(separator: ", "))
        }
        return lines
    }

    /// One row per step: time, step, s, accuracy, condition, standing, and what happened.
    private static func timeline(trigger: RegionTrigger, tracer: RegionTracer, written: [Event]) -> [[String]] {
        var rows: [[String]] = []
        var unnumbered = written
        let h = trigger.hysteresis
        for step in tracer.steps {
            var row: [String]
            var notes: [String] = []
            switch step.cause {
            case .fix(let fix), .staleFix(let fix):
                let isStale = if case .staleFix = step.cause { true } else { false }
                row = [
                    fix.time.rfc3339, isStale ? "stale fix" : "fix",
                    step.signedDistance.map { signed($0) } ?? "", fix.accuracy.map(metres) ?? "-",
                    step.condition ?? "-", standing(step),
                ]
                if let ignored = step.ignored {
                    notes.append("ignored: \(ignored)")
                } else if let condition = step.condition {
                    notes.append(contentsOf: fixNotes(step, condition: condition, hysteresis: h, fix: fix))
                }
            case .confirmationTimer(let due):
                row = [due.rfc3339, "delay over", "", "", "", standing(step)]
                if step.before != step.after {
                    notes.append(
                        "the \(step.after == .inside ? "enter" : "exit") streak held through its delay: confirmed")
                } else if step.streakBefore != nil && step.streakBefore?.fixes ?? 0 < h.minFixes {
                    notes.append(
                        "delay over but only \(step.streakBefore!.fixes) of \(h.minFixes) fixes: waits for more")
                } else {
                    notes.append("a timer of a streak cut earlier: nothing")
                }
            case .dwellTimer(let due):
                row = [due.rfc3339, "dwell due", "", "", "", standing(step)]
                if step.events.isEmpty && step.after == .inside {
                    notes.append("an exit confirmable by now wins over the dwell: no dwell")
                }
            case .forcedExit(let reason, let time):
                row = [time.rfc3339, reason == .removed ? "removed" : "expired", "", "", "", standing(step)]
                notes.append(
                    reason == .removed
                        ? "the device was removed (removeDevice): its stay ends"
                        : "the request expired, or the device was silent past --device-ttl: its stay ends")
            case .response(let response):
                row = [response.time.rfc3339, "response", "", "", "", standing(step)]
                let text = response.text.map { ": \"\($0.terminalSafe)\"" } ?? ""
                notes.append("the user answered #\(response.respondsTo) with \(response.action.terminalSafe)\(text)")
            }
            for event in step.events {
                let match = unnumbered.firstIndex { $0.kind == event.kind && $0.time == event.time }
                let sequence = match.map { "#\(unnumbered.remove(at: $0).sequence) " } ?? ""
                notes.append("→ \(sequence)\(event.kind.rawValue)\(event.kind == .response ? " event" : " notified")")
            }
            if step.events.isEmpty && step.before != step.after && step.before != .unknown {
                let kind = step.after == .inside ? "enter" : "exit"
                let notifies = kind == "enter" ? trigger.notifyOnEntry : trigger.notifyOnExit
                notes.append(
                    notifies
                        ? "\(kind) not notified: outside the request's schedule or muted"
                        : "\(kind) not notified: notifyOn\(kind == "enter" ? "Entry" : "Exit") is false")
            }
            if step.before == .unknown && step.after != .unknown && step.events.isEmpty && step.ignored == nil {
                notes.append(
                    "first usable fix sets the standing without an event (initial \(trigger.initial.rawValue))")
            }
            row.append(notes.joined(separator: "; "))
            rows.append(row)
        }
        return rows
    }

    /// Runs of plain fix rows with the same condition, standing and note, shown as the first row
    /// and one line with the count, the last time and the range of `s`. `rows` are one per step.
    private static func collapsed(_ rows: [[String]], steps: [RegionTraceStep]) -> [[String]] {
        var result: [[String]] = []
        var index = 0
        while index < rows.count {
            let row = rows[index]
            var end = index + 1
            let plain = row[1] == "fix" && !row[5].contains("→") && !row[6].contains("→") && !row[6].contains("cuts")
            while plain && end < rows.count && rows[end][1] == row[1] && rows[end][4] == row[4]
                && rows[end][5] == row[5] && rows[end][6] == row[6]
            {
                end += 1
            }
            result.append(row)
            if end - index > 2 {
                let values = steps[(index + 1)..<end].compactMap(\.signedDistance)
                let range = values.isEmpty ? "" : ", s \(signed(values.min()!)) … \(signed(values.max()!)) m"
                result.append([
                    "", "", "", "", "", "", "⋮ \(end - index - 1) more like this until \(rows[end - 1][0])\(range)",
                ])
            } else if end - index == 2 {
                result.append(rows[index + 1])
            }
            index = end
        }
        return result
    }

    private static func fixNotes(_ step: RegionTraceStep, condition: String, hysteresis h: Hysteresis, fix: Fix)
        -> [String]
    {
        var notes: [String] = []
        let towards = step.before == .inside ? "exit" : "enter"
        if step.before == .unknown { return notes }
        if condition == "band" {
            notes.append("between the thresholds")
        } else if condition != towards {
            notes.append("stays \(step.before.rawValue)")
        }
        if condition != towards, let cut = step.streakBefore {
            notes.append(
                "cuts the \(towards) streak of \(cut.fixes) fix\(cut.fixes == 1 ? "" : "es") since \(cut.since.rfc3339)"
            )
        }
        if condition == towards, step.before == step.after, let streak = step.streak {
            let delay = towards == "enter" ? h.enterDelay : h.exitDelay
            var text = "\(towards) streak since \(streak.since.rfc3339)"
            if streak.fixes < h.minFixes { text += " (\(streak.fixes) of \(h.minFixes) fixes)" }
            if delay > .zero {
                let due = streak.since.advanced(by: delay)
                text += fix.time >= due ? ", delay over" : ", confirmed at \(due.rfc3339) if it holds"
            }
            notes.append(text)
        }
        return notes
    }

    /// The closing lines: where the device stands and, if it never left or entered, why.
    private static func diagnosis(trigger: RegionTrigger, tracer: RegionTracer) -> [String] {
        guard let last = tracer.steps.last(where: { $0.ignored == nil || $0.after != .unknown }) else {
            return ["The request was never evaluated for this device."]
        }
        let h = trigger.hysteresis
        var lines: [String] = []
        switch last.after {
        case .unknown:
            lines.append("At the end the standing is unknown: no usable fix was evaluated.")
        case .inside, .outside:
            let inside = last.after == .inside
            let towards = inside ? "exit" : "enter"
            // The fixes since the standing last changed.
            let changed = tracer.steps.lastIndex { $0.before != $0.after } ?? 0
            let since = tracer.steps[changed...]
            let evaluated = since.filter { $0.condition != nil }
            lines.append(
                "At the end the device is \(last.after.rawValue) (since \(time(of: tracer.steps[changed]))); "
                    + "\(evaluated.count) evaluated fix\(evaluated.count == 1 ? "" : "es") since then.")
            if let streak = last.streak {
                let delay = inside ? h.exitDelay : h.enterDelay
                lines.append(
                    "An \(towards) streak of \(streak.fixes) fix\(streak.fixes == 1 ? "" : "es") since \(streak.since.rfc3339) was "
                        + "still open when the input ended (\(towards) delay \(seconds(delay)), min fixes \(h.minFixes)); "
                        + "a later fix, or --until, lets the clock run on.")
            } else {
                let meeting = evaluated.filter { $0.condition == towards }
                if meeting.isEmpty {
                    let extreme =
                        inside
                        ? evaluated.max { ($0.signedDistance ?? 0) < ($1.signedDistance ?? 0) }
                        : evaluated.min { ($0.signedDistance ?? 0) < ($1.signedDistance ?? 0) }
                    let superlative = inside ? "farthest out" : "closest"
                    if let extreme, let s = extreme.signedDistance {
                        let threshold = inside ? extreme.limits?.exit : extreme.limits?.enter
                        let rule =
                            threshold.map { inside ? "s > \(signed($0)) m" : "s ≤ \(signed($0)) m" }
                            ?? "the overlap share"
                        lines.append(
                            "No fix since then met the \(towards) condition (\(rule)): the \(superlative) "
                                + "was s = \(signed(s)) m at \(time(of: extreme)).")
                    }
                } else {
                    let cut = since.filter { $0.streakBefore != nil && $0.streak == nil && $0.before == $0.after }.count
                    lines.append(
                        "\(meeting.count) fix\(meeting.count == 1 ? "" : "es") met the \(towards) condition, but every \(towards) streak "
                            + "was cut (\(cut) time\(cut == 1 ? "" : "s")) by a fix in the band or back on this side before "
                            + "\(h.minFixes) fix\(h.minFixes == 1 ? "" : "es") and the \(seconds(inside ? h.exitDelay : h.enterDelay)) delay."
                    )
                }
            }
            let ignored = since.filter { $0.ignored != nil }
            if let first = ignored.first?.ignored {
                lines.append(
                    "\(ignored.count) fix\(ignored.count == 1 ? " was" : "es were") ignored since then (\(first)).")
            }
        }
        return lines
    }

    private static func standing(_ step: RegionTraceStep) -> String {
        if case .staleFix = step.cause { return "-" }
        return step.before == step.after ? step.after.rawValue : "\(step.before.rawValue) → \(step.after.rawValue)"
    }

    private static func time(of step: RegionTraceStep) -> String {
        switch step.cause {
        case .fix(let fix), .staleFix(let fix): fix.time.rfc3339
        case .confirmationTimer(let due), .dwellTimer(let due): due.rfc3339
        case .response(let response): response.time.rfc3339
        case .forcedExit(_, let time): time.rfc3339
        }
    }

    /// Metres to a decimetre, as events write distances.
    private static func metres(_ value: Double) -> String {
        JSONWriter.format(roundedDistance(value))
    }

    private static func signed(_ value: Double) -> String {
        let magnitude = metres(abs(value))
        return magnitude == "0" ? "0" : (value > 0 ? "+" : "−") + magnitude
    }

    private static func seconds(_ span: TimeSpan) -> String {
        "\(metres(span.seconds)) s"
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
