public import Fenceline

/// Writes a ``NotificationRequest`` as the request object of a catalog (SPEC §2, §12), the shape
/// ``CatalogDecoder`` reads: decoding what it writes gives an equal request.
///
/// Members follow SPEC §2's tables: `id`, `content`, `trigger`, `devices`, `schedule`, `filters`,
/// `expires`; a trigger starts with `type`. Every resolved setting is written, defaults included,
/// so the object means the same on its own and inside a catalog with `defaults`:
/// - `hysteresis` is an object with `preset` and every field. The preset is the one whose values
///   these are, else `"default"`; it matters only as the base a catalog's defaults would otherwise
///   replace (a `maxAccuracy` of `null` keeps the preset's none).
/// - `filters` has each check, `null` when off, since `null` removes a catalog default (§12).
/// - A setting with no value is `null`: `devices` (every device), `expires`, `dwell`, beacon
///   `major`, `minor` and `exitDelay`, proximity `to` and `maxAge`, time-interval `start`.
///   `schedule` is left out instead, as the decoder refuses a `null` one.
/// - `content` is written as events carry it: the fields it has.
/// - `dateComponents` holds the components given; the others match anything (§7).
///
/// Times are RFC 3339 in UTC, to the microsecond when not whole milliseconds (events' times stop
/// at milliseconds, which would move a `start` or `expires`).
public enum RequestEncoder {
    /// The request object's UTF-8 bytes, without a trailing newline.
    public static func encode(_ request: NotificationRequest) -> [UInt8] {
        var writer = JSONWriter()
        encode(request, into: &writer)
        return writer.bytes
    }

    /// Appends the request object to `writer`, for responses that list several.
    package static func encode(_ request: NotificationRequest, into writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("id", first: true)
        writer.string(request.id)
        // Always an object: the decoder refuses a `null` content.
        writer.key("content")
        writer.writeContent(request.content)
        writer.key("trigger")
        writeTrigger(request.trigger, into: &writer)
        writer.key("devices")
        if let devices = request.devices { writeStrings(devices, into: &writer) } else { writer.raw("null") }
        if let schedule = request.schedule {
            writer.key("schedule")
            writeSchedule(schedule, into: &writer)
        }
        writer.key("filters")
        writeFilters(request.filters, into: &writer)
        writer.key("expires")
        writeTime(request.expires, into: &writer)
        writer.raw("}")
    }

    private static func writeTrigger(_ trigger: Trigger, into writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("type", first: true)
        writer.string(trigger.kind.rawValue)
        switch trigger {
        case .region(let region): writeRegion(region, into: &writer)
        case .beacon(let beacon): writeBeacon(beacon, into: &writer)
        case .timeInterval(let interval):
            writer.key("seconds")
            writer.number(interval.interval.seconds)
            writer.key("repeats")
            writeBool(interval.repeats, into: &writer)
            writer.key("start")
            writeTime(interval.start, into: &writer)
        case .calendar(let calendar):
            writer.key("dateComponents")
            writeComponents(calendar.dateComponents, into: &writer)
            writer.key("timeZone")
            writer.string(calendar.timeZone)
            writer.key("repeats")
            writeBool(calendar.repeats, into: &writer)
        case .proximity(let proximity): writeProximity(proximity, into: &writer)
        }
        writer.raw("}")
    }

    /// The region trigger's members after `type`, in SPEC §2's order.
    private static func writeRegion(_ region: RegionTrigger, into writer: inout JSONWriter) {
        switch region.geometry {
        case .circle(let center, let radius):
            writer.key("center")
            writer.raw("{")
            writer.key("lat", first: true)
            writer.number(center.latitude)
            writer.key("lon")
            writer.number(center.longitude)
            writer.raw("}")
            writer.key("radius")
            writer.number(radius)
        case .polygons(let polygons):
            // One polygon is a GeoJSON Polygon; the decoder reads a MultiPolygon of one the same.
            writer.key("geometry")
            writer.raw("{")
            writer.key("type", first: true)
            if polygons.count == 1 {
                writer.string("Polygon")
                writer.key("coordinates")
                writeRings(polygons[0], into: &writer)
            } else {
                writer.string("MultiPolygon")
                writer.key("coordinates")
                writer.raw("[")
                for (index, rings) in polygons.enumerated() {
                    if index > 0 { writer.raw(",") }
                    writeRings(rings, into: &writer)
                }
                writer.raw("]")
            }
            writer.raw("}")
        case .corridor(let path, let width):
            writer.key("geometry")
            writer.raw("{")
            writer.key("type", first: true)
            writer.string("LineString")
            writer.key("coordinates")
            writePositions(path, into: &writer)
            writer.raw("}")
            writer.key("corridor")
            writer.number(width)
        }
        writer.key("notifyOnEntry")
        writeBool(region.notifyOnEntry, into: &writer)
        writer.key("notifyOnExit")
        writeBool(region.notifyOnExit, into: &writer)
        writer.key("notifyOnDwell")
        writeBool(region.notifyOnDwell, into: &writer)
        writer.key("dwell")
        writeSeconds(region.dwell, into: &writer)
        writer.key("notifyOnCross")
        writeBool(region.notifyOnCross, into: &writer)
        writer.key("crossing")
        writer.string(region.crossing.rawValue)
        writer.key("initial")
        writer.string(region.initial.rawValue)
        writer.key("repeats")
        writeBool(region.repeats, into: &writer)
        writer.key("hysteresis")
        writeHysteresis(region.hysteresis, into: &writer)
    }

    private static func writeHysteresis(_ hysteresis: Hysteresis, into writer: inout JSONWriter) {
        let preset = Hysteresis.Preset.allCases.first { Hysteresis(preset: $0) == hysteresis } ?? .default
        writer.raw("{")
        writer.key("preset", first: true)
        writer.string(preset.rawValue)
        writer.key("enterCushion")
        writer.number(hysteresis.enterCushion)
        writer.key("exitCushion")
        writer.number(hysteresis.exitCushion)
        writer.key("enterDelay")
        writer.number(hysteresis.enterDelay.seconds)
        writer.key("exitDelay")
        writer.number(hysteresis.exitDelay.seconds)
        writer.key("minFixes")
        writer.integer(hysteresis.minFixes)
        writer.key("accuracy")
        writer.string(hysteresis.accuracy.rawValue)
        writer.key("maxAccuracy")
        writeNumber(hysteresis.maxAccuracy, into: &writer)
        writer.key("enterOverlap")
        writer.number(hysteresis.enterOverlap)
        writer.key("exitOverlap")
        writer.number(hysteresis.exitOverlap)
        writer.raw("}")
    }

    /// The beacon trigger's members after `type`, in SPEC §2's order.
    private static func writeBeacon(_ beacon: BeaconTrigger, into writer: inout JSONWriter) {
        writer.key("uuid")
        writer.string(beacon.uuid)
        writer.key("major")
        writeInteger(beacon.major, into: &writer)
        writer.key("minor")
        writeInteger(beacon.minor, into: &writer)
        writer.key("proximity")
        writer.string(beacon.proximity.rawValue)
        writer.key("window")
        writer.number(beacon.window.seconds)
        writer.key("filter")
        switch beacon.filter {
        case .average:
            writer.string("average")
        case .arma(let coefficient):
            // The object form even for the default coefficient, so the value is in the output.
            writer.raw("{")
            writer.key("type", first: true)
            writer.string("arma")
            writer.key("c")
            writer.number(coefficient)
            writer.raw("}")
        }
        writer.key("txPower")
        writer.number(beacon.txPower)
        writer.key("distanceModel")
        writer.raw("{")
        writer.key("c1", first: true)
        writer.number(beacon.distanceModel.c1)
        writer.key("c2")
        writer.number(beacon.distanceModel.c2)
        writer.key("c3")
        writer.number(beacon.distanceModel.c3)
        writer.raw("}")
        writer.key("enterDelay")
        writer.number(beacon.enterDelay.seconds)
        writer.key("exitDelay")
        writeSeconds(beacon.exitDelay, into: &writer)
        writer.key("exitTimeout")
        writer.number(beacon.exitTimeout.seconds)
        writeNotifying(entry: beacon.notifyOnEntry, exit: beacon.notifyOnExit, repeats: beacon.repeats, into: &writer)
    }

    /// The proximity trigger's members after `type`, in SPEC §12's order.
    private static func writeProximity(_ proximity: ProximityTrigger, into writer: inout JSONWriter) {
        writer.key("near")
        writer.number(proximity.near)
        writer.key("far")
        writer.number(proximity.far)
        writer.key("among")
        writeStrings(proximity.among.map(\.text), into: &writer)
        writer.key("to")
        if let to = proximity.to { writeStrings(to.map(\.text), into: &writer) } else { writer.raw("null") }
        writer.key("maxAge")
        writeSeconds(proximity.maxAge, into: &writer)
        writer.key("enterDelay")
        writer.number(proximity.enterDelay.seconds)
        writer.key("exitDelay")
        writer.number(proximity.exitDelay.seconds)
        writeNotifying(
            entry: proximity.notifyOnEntry, exit: proximity.notifyOnExit, repeats: proximity.repeats, into: &writer)
    }

    /// The members a beacon and a proximity trigger end with, in that order.
    private static func writeNotifying(entry: Bool, exit: Bool, repeats: Bool, into writer: inout JSONWriter) {
        writer.key("notifyOnEntry")
        writeBool(entry, into: &writer)
        writer.key("notifyOnExit")
        writeBool(exit, into: &writer)
        writer.key("repeats")
        writeBool(repeats, into: &writer)
    }

    /// The components given, largest unit first.
    private static func writeComponents(_ components: CalendarComponents, into writer: inout JSONWriter) {
        writer.raw("{")
        var first = true
        func member(_ name: StaticString, _ value: Int?) {
            guard let value else { return }
            writer.key(name, first: first)
            first = false
            writer.integer(value)
        }
        member("year", components.year)
        member("month", components.month)
        member("day", components.day)
        member("hour", components.hour)
        member("minute", components.minute)
        member("second", components.second)
        member("weekday", components.weekday)
        member("weekdayOrdinal", components.weekdayOrdinal)
        writer.raw("}")
    }

    /// Days by name from Sunday, and local times as `HH:MM`, as the catalog spells them.
    private static func writeSchedule(_ schedule: Schedule, into writer: inout JSONWriter) {
        let dayNames = Schedule.dayNames
        func clock(_ minutes: Int) -> String {
            let hour = minutes / 60
            let minute = minutes % 60
            return (hour < 10 ? "0" : "") + String(hour) + (minute < 10 ? ":0" : ":") + String(minute)
        }
        writer.raw("{")
        writer.key("timeZone", first: true)
        writer.string(schedule.timeZone)
        writer.key("windows")
        writer.raw("[")
        for (index, window) in schedule.windows.enumerated() {
            writer.raw(index == 0 ? "{" : ",{")
            writer.key("days", first: true)
            writeStrings(window.days.sorted().filter { (1...7).contains($0) }.map { dayNames[$0 - 1] }, into: &writer)
            writer.key("start")
            writer.string(clock(window.start))
            writer.key("end")
            writer.string(clock(window.end))
            writer.raw("}")
        }
        writer.raw("]}")
    }

    private static func writeFilters(_ filters: PositionFilters, into writer: inout JSONWriter) {
        writer.raw("{")
        writer.key("maxSpeed", first: true)
        writeNumber(filters.maxSpeed, into: &writer)
        writer.key("minDistance")
        writeNumber(filters.minDistance, into: &writer)
        writer.key("maxFuture")
        writeSeconds(filters.maxFuture, into: &writer)
        writer.raw("}")
    }

    private static func writeRings(_ rings: [[Coordinate]], into writer: inout JSONWriter) {
        writer.raw("[")
        for (index, ring) in rings.enumerated() {
            if index > 0 { writer.raw(",") }
            writePositions(ring, into: &writer)
        }
        writer.raw("]")
    }

    /// GeoJSON positions, `[lon, lat]`.
    private static func writePositions(_ positions: [Coordinate], into writer: inout JSONWriter) {
        writer.raw("[")
        for (index, position) in positions.enumerated() {
            writer.raw(index == 0 ? "[" : ",[")
            writer.number(position.longitude)
            writer.raw(",")
            writer.number(position.latitude)
            writer.raw("]")
        }
        writer.raw("]")
    }

    private static func writeStrings(_ strings: [String], into writer: inout JSONWriter) {
        writer.raw("[")
        for (index, text) in strings.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.string(text)
        }
        writer.raw("]")
    }

    private static func writeBool(_ flag: Bool, into writer: inout JSONWriter) {
        writer.raw(flag ? "true" : "false")
    }

    private static func writeNumber(_ value: Double?, into writer: inout JSONWriter) {
        if let value { writer.number(value) } else { writer.raw("null") }
    }

    private static func writeInteger(_ value: Int?, into writer: inout JSONWriter) {
        if let value { writer.integer(value) } else { writer.raw("null") }
    }

    private static func writeSeconds(_ span: TimeSpan?, into writer: inout JSONWriter) {
        writeNumber(span?.seconds, into: &writer)
    }

    /// RFC 3339 with the microseconds a catalog may give: ``JSONWriter/time(_:)`` stops at
    /// milliseconds (truncating), so the last three digits go before its `Z`.
    private static func writeTime(_ time: Timestamp?, into writer: inout JSONWriter) {
        guard let time else {
            writer.raw("null")
            return
        }
        let micros = Int((time.microseconds % 1000 + 1000) % 1000)
        guard micros != 0 else {
            writer.time(time)
            return
        }
        var text = time.rfc3339
        guard text.last == "Z" else {
            writer.string(text)
            return
        }
        text.removeLast()
        let digits = String(micros)
        writer.string(text + String(repeating: "0", count: 3 - digits.count) + digits + "Z")
    }
}
