import Foundation

/// Checks a request against SPEC §2 beyond what its JSON types say: fences (through GEOS), ranges,
/// the 60-second rule, known categories and time zones.
///
/// Paths are relative to the request in the catalog layout (`trigger.radius`,
/// `trigger.geometry.coordinates[0]`, `content.category`); decoders of other layouts map them.
public final class RequestValidator {
    let geometry: GeometryValidator

    /// Creates a validator with its own GEOS context.
    public init() {
        geometry = GeometryValidator()
    }

    init(geometry: GeometryValidator) {
        self.geometry = geometry
    }

    /// Every problem in `request` as (path, message); empty when the engine can take it.
    public func problems(in request: NotificationRequest, categories: Set<String>) -> [(path: String, message: String)]
    {
        var problems: [(path: String, message: String)] = []
        func add(_ path: String, _ message: String) { problems.append((path, message)) }
        if request.id.isEmpty { add("id", "id must be a non-empty string") }
        // Read once, and only when set: each read makes the value (a catalog of a million fences
        // validates each, most without content).
        if request.hasContent {
            let content = request.content
            if let category = content.category, !categories.contains(category) {
                let known = categories.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
                add(
                    "content.category",
                    "unknown category \"\(category)\""
                        + (known.isEmpty ? "; the catalog defines none" : "; known: \(known)"))
            }
            // Filled per event when it has placeholders: a field of any size would be copied into
            // every event (APNs itself takes 4 KiB for a whole payload).
            // Field by field rather than through an array of them, made per request.
            func checkSize(_ name: String, _ text: String?) {
                guard let text, text.utf8.count > NotificationContent.maximumFieldBytes else { return }
                add(
                    "content.\(name)",
                    "\(name) is \(text.utf8.count) bytes; at most \(NotificationContent.maximumFieldBytes) are accepted"
                )
            }
            checkSize("title", content.title)
            checkSize("subtitle", content.subtitle)
            checkSize("body", content.body)
            checkSize("thread", content.thread)
            for problem in NotificationAttachment.problems(in: content.attachments) {
                add("content.\(problem.path)", problem.message)
            }
        }
        if let devices = request.devices, devices.contains(where: \.isEmpty) {
            add("devices", "device ids must be non-empty strings")
        }
        for problem in request.filters.problems { add("filters.\(problem.field)", problem.message) }
        switch request.trigger {
        case .region(let region): regionProblems(region, add: add)
        case .beacon(let beacon): beaconProblems(beacon, add: add)
        case .timeInterval(let interval):
            if !(interval.interval > .zero) {
                add("trigger.seconds", "seconds must be > 0 (got \(interval.interval.seconds))")
            } else if interval.repeats && interval.interval < TimeSpan(seconds: 60) {
                add(
                    "trigger.seconds",
                    "a repeating time interval must be at least 60 seconds (got \(interval.interval.seconds))")
            } else if let start = interval.start, !start.isRepresentable {
                add("trigger.start", "start must lie within 0000-01-01T00:00:00Z…9999-12-31T23:59:59Z")
            } else if let start = interval.start,
                interval.interval > .longest || !start.advanced(by: interval.interval).isRepresentable
            {
                add(
                    "trigger.seconds",
                    "start + seconds falls after 9999-12-31T23:59:59Z, the last representable instant: it would never fire"
                )
            } else if interval.interval > .longest {
                // The longest span is a microsecond short of 10,000 years.
                add("trigger.seconds", "seconds must be less than \(Int64(TimeSpan.longest.seconds.rounded(.up)))")
            }
        case .calendar(let calendar): calendarProblems(calendar, add: add)
        case .proximity(let proximity): proximityProblems(proximity, add: add)
        }
        if let schedule = request.schedule {
            if TimeZone(identifier: schedule.timeZone) == nil {
                add(
                    "schedule.timeZone",
                    "unknown time zone \"\(schedule.timeZone)\"; use an IANA name such as \"Europe/Amsterdam\"")
            }
            for (index, window) in schedule.windows.enumerated() {
                if window.days.isEmpty || window.days.contains(where: { !(1...7).contains($0) }) {
                    add(
                        "schedule.windows[\(index)].days",
                        "days must name at least one of sun, mon, tue, wed, thu, fri, sat")
                }
                if window.start == window.end {
                    add("schedule.windows[\(index)]", "start and end are equal; the window would be empty")
                }
            }
        }
        return problems
    }

    private func regionProblems(_ region: RegionTrigger, add: (String, String) -> Void) {
        for problem in geometry.problems(in: region.geometry) {
            switch region.geometry {
            case .circle: add("trigger.\(problem.path)", problem.message)
            case .corridor where problem.path == "corridor": add("trigger.corridor", problem.message)
            default:
                add(problem.path.isEmpty ? "trigger.geometry" : "trigger.geometry.\(problem.path)", problem.message)
            }
        }
        if region.notifyOnDwell {
            if let dwell = region.dwell {
                if !(dwell > .zero) {
                    add("trigger.dwell", "dwell must be a number of seconds > 0 (got \(dwell.seconds))")
                }
            } else {
                add("trigger.dwell", "notifyOnDwell needs dwell, the seconds a visit must last")
            }
        }
        let h = region.hysteresis
        func checkCushion(_ name: String, _ value: Double) {
            if !value.isFinite { add("trigger.hysteresis.\(name)", "\(name) must be a finite number of metres") }
        }
        checkCushion("enterCushion", h.enterCushion)
        checkCushion("exitCushion", h.exitCushion)
        if h.accuracy != .overlap && h.enterCushion + h.exitCushion < 0 {
            add(
                "trigger.hysteresis",
                "enterCushion + exitCushion must be ≥ 0, or a fix could meet the enter and exit conditions at once (got \(h.enterCushion) and \(h.exitCushion))"
            )
        }
        func checkDelay(_ name: String, _ value: TimeSpan) {
            if value < .zero { add("trigger.hysteresis.\(name)", "\(name) must be ≥ 0 seconds (got \(value.seconds))") }
        }
        checkDelay("enterDelay", h.enterDelay)
        checkDelay("exitDelay", h.exitDelay)
        if h.minFixes < 1 { add("trigger.hysteresis.minFixes", "minFixes must be ≥ 1 (got \(h.minFixes))") }
        if let maxAccuracy = h.maxAccuracy, !(maxAccuracy >= 0) {
            add("trigger.hysteresis.maxAccuracy", "maxAccuracy must be ≥ 0 metres (got \(maxAccuracy))")
        }
        if !(0...1).contains(h.enterOverlap) || !(0...1).contains(h.exitOverlap) || !(h.exitOverlap < h.enterOverlap) {
            add(
                "trigger.hysteresis",
                "enterOverlap and exitOverlap must lie in [0, 1] with exitOverlap < enterOverlap (got \(h.enterOverlap) and \(h.exitOverlap))"
            )
        }
    }

    private func beaconProblems(_ beacon: BeaconTrigger, add: (String, String) -> Void) {
        if BeaconIdentity.normalizedUUID(beacon.uuid) == nil {
            add("trigger.uuid", "uuid must look like 2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6 (got \"\(beacon.uuid)\")")
        }
        for (name, value) in [("major", beacon.major), ("minor", beacon.minor)] {
            if let value, !(0...65_535).contains(value) {
                add("trigger.\(name)", "\(name) must be in 0…65535 (got \(value))")
            }
        }
        if !(beacon.window > .zero) { add("trigger.window", "window must be > 0 seconds") }
        if !(beacon.exitTimeout > .zero) { add("trigger.exitTimeout", "exitTimeout must be > 0 seconds") }
        if beacon.enterDelay < .zero { add("trigger.enterDelay", "enterDelay must be ≥ 0 seconds") }
        if let exitDelay = beacon.exitDelay, exitDelay < .zero {
            add("trigger.exitDelay", "exitDelay must be ≥ 0 seconds")
        }
        if !(beacon.txPower < 0) {
            add("trigger.txPower", "txPower must be a negative dBm value (got \(beacon.txPower))")
        }
        if case .arma(let c) = beacon.filter, !(c > 0 && c <= 1) {
            add("trigger.filter", "the ARMA coefficient must be in (0, 1] (got \(c))")
        }
        let model = beacon.distanceModel
        if ![model.c1, model.c2, model.c3].allSatisfy(\.isFinite) {
            add("trigger.distanceModel", "distanceModel needs finite c1, c2 and c3")
        }
    }

    private func proximityProblems(_ proximity: ProximityTrigger, add: (String, String) -> Void) {
        if !(proximity.near > 0 && proximity.near.isFinite) {
            add("trigger.near", "near must be a finite number of metres > 0 (got \(proximity.near))")
        } else if !(proximity.far >= proximity.near && proximity.far.isFinite) {
            add(
                "trigger.far",
                "far must be a finite number of metres ≥ near (\(proximity.near)), or absent for near (got \(proximity.far))"
            )
        }
        for (name, list) in [("among", proximity.among), ("to", proximity.to)] {
            guard let list else { continue }
            if list.isEmpty { add("trigger.\(name)", "\(name) must name at least one device id or prefix") }
            for (index, pattern) in list.enumerated() {
                if pattern.text.isEmpty {
                    add("trigger.\(name)[\(index)]", "a device id must be a non-empty string")
                } else if pattern.hasInnerWildcard {
                    add(
                        "trigger.\(name)[\(index)]",
                        "\"*\" may only end an id, as a prefix wildcard (got \"\(pattern.text)\")")
                }
            }
        }
        if let maxAge = proximity.maxAge, !(maxAge > .zero) {
            add("trigger.maxAge", "maxAge must be > 0 seconds, or absent for no limit (got \(maxAge.seconds))")
        }
        for (name, value) in [("enterDelay", proximity.enterDelay), ("exitDelay", proximity.exitDelay)]
        where value < .zero {
            add("trigger.\(name)", "\(name) must be ≥ 0 seconds (got \(value.seconds))")
        }
    }

    private func calendarProblems(_ calendar: CalendarTrigger, add: (String, String) -> Void) {
        let c = calendar.dateComponents
        let ranges: [(String, Int?, ClosedRange<Int>)] = [
            ("year", c.year, 1...9999), ("month", c.month, 1...12), ("day", c.day, 1...31), ("hour", c.hour, 0...23),
            ("minute", c.minute, 0...59), ("second", c.second, 0...59), ("weekday", c.weekday, 1...7),
            ("weekdayOrdinal", c.weekdayOrdinal, 1...5),
        ]
        var any = false
        for (name, value, range) in ranges {
            guard let value else { continue }
            any = true
            if !range.contains(value) {
                add(
                    "trigger.dateComponents.\(name)",
                    "\(name) must be in \(range.lowerBound)…\(range.upperBound) (got \(value))")
            }
        }
        if !any {
            add(
                "trigger.dateComponents",
                "dateComponents must name at least one of year, month, day, hour, minute, second, weekday, weekdayOrdinal"
            )
        }
        if TimeZone(identifier: calendar.timeZone) == nil {
            add(
                "trigger.timeZone",
                "unknown time zone \"\(calendar.timeZone)\"; use an IANA name such as \"America/New_York\"")
        } else if any, ranges.allSatisfy({ $0.1.map($0.2.contains) ?? true }), let rule = CalendarRule(calendar) {
            // Fields that are each in range can still never meet (30 February, day 3 of the second week).
            let from = c.year.map { year in
                Timestamp(
                    microseconds: Int64(CivilDate(year: year, month: 1, day: 1).daysSinceEpoch - 2) * 86_400_000_000)
            }
            if rule.nextFiring(after: from ?? Timestamp(microseconds: 0)) == nil {
                add("trigger.dateComponents", "these dateComponents never match a date (such as February 30)")
            }
        }
    }
}

@available(*, unavailable)
extension RequestValidator: Sendable {}
