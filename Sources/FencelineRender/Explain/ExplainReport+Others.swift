public import Fenceline
import FencelineFormats

/// `explain` for beacon, time and calendar requests (SPEC §12): each sighting with what smoothing
/// made of it, each timer, and each due time with whether it fired, was muted or is still ahead.
extension ExplainReport {
    /// A table of rows, the first the header, columns padded (those in `right` to the right)
    /// and the last one left free.
    static func table(_ rows: [[String]], right: Set<Int> = []) -> [String] {
        guard let columns = rows.first?.count else { return [] }
        let widths = (0..<(columns - 1)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            var text = ""
            for column in 0..<(columns - 1) {
                let padding = String(repeating: " ", count: max(0, widths[column] - row[column].count))
                text += (right.contains(column) ? padding + row[column] : row[column] + padding) + "  "
            }
            text += row[columns - 1]
            while text.last == " " { text.removeLast() }
            return text
        }
    }

    /// The numbers the run gave the step's events, taken from `unnumbered` as they are matched.
    static func notified(_ events: [Event], from unnumbered: inout [Event]) -> [String] {
        events.map { event in
            let match = unnumbered.firstIndex {
                $0.kind == event.kind && $0.time == event.time && $0.device == event.device && $0.other == event.other
            }
            let sequence = match.map { "#\(unnumbered.remove(at: $0).sequence) " } ?? ""
            let device = event.trigger == .beacon || event.device == nil ? "" : " for \(event.device!)"
            return "→ \(sequence)\(event.kind.rawValue)\(device) notified"
        }
    }

    static func beaconReport(
        request: NotificationRequest, trigger: BeaconTrigger, tracer: RegionTracer, written: [Event]
    ) -> String {
        let identity = [trigger.uuid, trigger.major.map(String.init) ?? "any", trigger.minor.map(String.init) ?? "any"]
        let filter =
            switch trigger.filter {
            case .average: "trimmed average"
            case .arma(let c): "ARMA c = \(JSONWriter.format(c))"
            }
        var exits = "exit after \(JSONWriter.format(trigger.exitTimeout.seconds)) s without a counting sighting"
        if let delay = trigger.exitDelay {
            exits += ", or once sightings stop counting for \(JSONWriter.format(delay.seconds)) s"
        }
        var lines = [
            "Request \"\(request.id)\" (beacon \(identity.joined(separator: "/"))) for device \"\(tracer.device)\"",
            "  a sighting counts when its class is \(trigger.proximity.rawValue) or nearer; RSSI smoothed over "
                + "\(JSONWriter.format(trigger.window.seconds)) s (\(filter)), txPower \(JSONWriter.format(trigger.txPower)) dBm",
            "  enter delay \(JSONWriter.format(trigger.enterDelay.seconds)) s; \(exits); repeats \(trigger.repeats)",
        ]
        guard !tracer.beaconSteps.isEmpty else {
            lines += ["", "No sighting of the region's beacons by device \"\(tracer.device)\" was read."]
            return lines.joined(separator: "\n") + "\n"
        }
        var unnumbered = written
        var rows = [
            ["time", "step", "beacon", "rssi", "smoothed", "distance (m)", "class", "standing", "what happened"]
        ]
        for step in tracer.beaconSteps {
            let standing =
                step.wasInside == step.isInside
                ? (step.isInside ? "inside" : "outside")
                : "\(step.wasInside ? "inside" : "outside") → \(step.isInside ? "inside" : "outside")"
            var notes: [String] = []
            var row: [String]
            switch step.cause {
            case .sighting(let time, let beacon, let rssi):
                row = [time.rfc3339, "sighting", "\(beacon.major)/\(beacon.minor)", JSONWriter.format(rssi)]
                if let report = step.report {
                    row += [
                        JSONWriter.format((report.rssi * 10).rounded() / 10),
                        JSONWriter.format((report.distance * 100).rounded() / 100), report.proximity.rawValue,
                    ]
                    // The band (SPEC §6): a class kept although the distance is past its plain
                    // boundary, until it reaches 1.1 × that boundary.
                    if report.proximity < Proximity.plain(distance: report.distance),
                        let edge = report.proximity.bandEdge
                    {
                        notes.append(
                            "\(report.proximity.rawValue) held by the band (farther from \(JSONWriter.format(edge)) m)")
                    }
                    notes.append(
                        step.counts == true ? "counts" : "does not count (beyond \(trigger.proximity.rawValue))")
                } else {
                    row += ["", "", ""]
                }
                if let ignored = step.ignored { notes = ["ignored: \(ignored)"] }
            case .enterDelay(let due):
                row = [due.rfc3339, "enter delay over", "", "", "", "", ""]
                notes.append("every sighting since the first counted: confirmed")
            case .exitTimeout(let due):
                row = [due.rfc3339, "exit timeout", "", "", "", "", ""]
                notes.append("no counting sighting for \(JSONWriter.format(trigger.exitTimeout.seconds)) s")
            case .exitDelay(let due):
                row = [due.rfc3339, "exit delay over", "", "", "", "", ""]
                notes.append("no sighting counted through the exit delay")
            }
            notes += notified(step.events, from: &unnumbered)
            if step.events.isEmpty && step.wasInside != step.isInside {
                notes.append(
                    "not notified (notifyOn\(step.isInside ? "Entry" : "Exit") false, or muted by the schedule)")
            }
            rows.append(row + [standing, notes.joined(separator: "; ")])
        }
        lines.append("")
        lines += table(rows, right: [3, 4, 5])
        lines.append("")
        let last = tracer.beaconSteps.last!
        lines.append("At the end the device is \(last.isInside ? "inside" : "outside").")
        return lines.joined(separator: "\n") + "\n"
    }

    static func timingReport(request: NotificationRequest, tracer: RegionTracer, written: [Event]) -> String {
        let rule: String
        switch request.trigger {
        case .timeInterval(let interval):
            rule =
                "every \(JSONWriter.format(interval.interval.seconds)) s" + (interval.repeats ? "" : ", once")
                + (interval.start.map { " from \($0.rfc3339)" } ?? " from when it was added")
        case .calendar(let calendar):
            let c = calendar.dateComponents
            let parts: [(String, Int?)] = [
                ("year", c.year), ("month", c.month), ("day", c.day), ("weekday", c.weekday),
                ("weekdayOrdinal", c.weekdayOrdinal), ("hour", c.hour), ("minute", c.minute), ("second", c.second),
            ]
            rule =
                parts.compactMap { name, value in value.map { "\(name) \($0)" } }.joined(separator: ", ")
                + " in \(calendar.timeZone)" + (calendar.repeats ? ", repeating" : ", once")
        default:
            rule = ""
        }
        var lines = ["Request \"\(request.id)\" (\(request.trigger.kind.rawValue): \(rule))"]
        if let schedule = request.schedule {
            lines.append(
                "  notifies only within its schedule (\(schedule.windows.count) window\(schedule.windows.count == 1 ? "" : "s"), \(schedule.timeZone))"
            )
        }
        var unnumbered = written
        var rows = [["time", "step", "what happened"]]
        for step in tracer.timingSteps {
            var notes: [String] = []
            if step.muted {
                notes.append("muted: the schedule is closed")
            } else if step.events.isEmpty {
                notes.append("fired, nothing delivered")
            }
            notes += notified(step.events, from: &unnumbered)
            notes.append(step.next.map { "next due \($0.rfc3339)" } ?? "not due again")
            rows.append([step.due.rfc3339, "due", notes.joined(separator: "; ")])
        }
        lines.append("")
        if rows.count == 1 {
            lines.append("It never fell due while the input ran.")
        } else {
            lines += table(rows)
        }
        lines.append("")
        if let next = tracer.nextDue {
            lines.append(
                "Not yet due at the end: next due \(next.rfc3339) (a later reading, a tick or --until lets the clock get there)."
            )
        } else {
            lines.append("At the end it is not due again (delivered, or no later time matches).")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
