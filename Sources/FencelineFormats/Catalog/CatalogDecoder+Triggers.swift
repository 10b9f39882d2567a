import Fenceline

extension CatalogDecoder {
    // The members each kind of object may have, built once rather than per object read.
    static let requestFields: KnownNames = ["id", "content", "trigger", "devices", "schedule", "filters", "expires"]
    static let filterFields: KnownNames = ["maxSpeed", "minDistance", "maxFuture"]
    static let regionFields: KnownNames = [
        "type", "center", "radius", "geometry", "corridor", "notifyOnEntry", "notifyOnExit", "notifyOnDwell", "dwell",
        "notifyOnCross", "crossing", "initial", "repeats", "hysteresis",
    ]
    static let featureFields: KnownNames = ["type", "id", "geometry", "properties", "bbox"]
    static let featurePropertyFields = regionFields + ["id", "content", "devices", "schedule", "filters", "expires"]
    static let centerFields: KnownNames = ["lat", "lon"]
    static let geometryFields: KnownNames = ["type", "coordinates", "bbox", "crs"]
    static let contentFields: KnownNames = [
        "title", "subtitle", "body", "badge", "sound", "category", "thread", "userInfo", "mutableContent",
        "attachments",
    ]
    static let intervalFields: KnownNames = ["type", "seconds", "repeats", "start"]
    static let calendarFields: KnownNames = ["type", "dateComponents", "timeZone", "repeats"]
    static let dateComponentFields: KnownNames = [
        "year", "month", "day", "hour", "minute", "second", "weekday", "weekdayOrdinal",
    ]
    static let proximityFields: KnownNames = [
        "type", "near", "far", "among", "to", "maxAge", "enterDelay", "exitDelay", "notifyOnEntry", "notifyOnExit",
        "repeats",
    ]
    static let beaconFields: KnownNames = [
        "type", "uuid", "major", "minor", "proximity", "window", "filter", "txPower", "distanceModel", "enterDelay",
        "exitDelay", "exitTimeout", "notifyOnEntry", "notifyOnExit", "repeats",
    ]
    static let beaconFilterFields: KnownNames = ["type", "c"]
    static let distanceModelFields: KnownNames = ["c1", "c2", "c3"]
    static let attachmentFields: KnownNames = ["id", "url", "type", "options"]
    static let attachmentOptionFields: KnownNames = ["thumbnailHidden", "thumbnailClippingRect", "thumbnailTime"]
    static let clippingRectFields: KnownNames = ["x", "y", "width", "height"]
    static let categoryFields: KnownNames = ["id", "actions", "options"]
    static let actionMemberFields: KnownNames = ["id", "title", "options", "textInput"]
    static let textInputFields: KnownNames = ["button", "placeholder"]
    static let scheduleFields: KnownNames = ["timeZone", "windows"]
    static let windowFields: KnownNames = ["days", "start", "end"]
    static let hysteresisFields: KnownNames = [
        "preset", "enterCushion", "exitCushion", "enterDelay", "exitDelay", "minFixes", "accuracy", "maxAccuracy",
        "enterOverlap", "exitOverlap",
    ]

    func decodeTrigger(_ value: JSONRef?, path: String, defaults: Hysteresis, sink: IssueSink) -> Trigger? {
        guard let fields = FieldReader(value, path: path, sink: sink) else { return nil }
        guard let type = fields.string("type", required: true) else { return nil }
        switch type {
        case "region":
            fields.warnUnknown(known: Self.regionFields)
            guard let geometry = decodeRegionGeometry(fields, sink: sink) else { return nil }
            return .region(decodeRegionOptions(fields, geometry: geometry, defaults: defaults, sink: sink))
        case "beacon":
            return decodeBeacon(fields, sink: sink).map(Trigger.beacon)
        case "proximity":
            return decodeProximity(fields, sink: sink).map(Trigger.proximity)
        case "timeInterval":
            fields.warnUnknown(known: Self.intervalFields)
            guard let seconds = fields.number("seconds", required: true) else { return nil }
            guard let interval = TimeSpan(checkedSeconds: seconds) else {
                sink.add(
                    fields.at("seconds"),
                    "seconds must be a number > 0 and at most \(FieldReader.longestSeconds) (got \(seconds))")
                return nil
            }
            return .timeInterval(
                TimeIntervalTrigger(
                    interval: interval, repeats: fields.bool("repeats") ?? false, start: fields.timestamp("start")))
        case "calendar":
            fields.warnUnknown(known: Self.calendarFields)
            guard
                let components = FieldReader(
                    fields["dateComponents"], path: fields.at("dateComponents"), sink: sink)
            else {
                return nil
            }
            components.warnUnknown(known: Self.dateComponentFields)
            let dateComponents = CalendarComponents(
                year: components.integer("year"), month: components.integer("month"), day: components.integer("day"),
                hour: components.integer("hour"), minute: components.integer("minute"),
                second: components.integer("second"),
                weekday: components.integer("weekday"), weekdayOrdinal: components.integer("weekdayOrdinal"))
            return .calendar(
                CalendarTrigger(
                    dateComponents: dateComponents, timeZone: fields.string("timeZone") ?? "UTC",
                    repeats: fields.bool("repeats") ?? false))
        default:
            sink.add(
                fields.at("type"),
                "unknown trigger type \"\(type)\"; expected \"region\", \"beacon\", \"proximity\", \"timeInterval\" or \"calendar\""
            )
            return nil
        }
    }

    /// The region options shared by both layouts (`fields` is the trigger, or a Feature's properties).
    func decodeRegionOptions(_ fields: FieldReader, geometry: RegionGeometry, defaults: Hysteresis, sink: IssueSink)
        -> RegionTrigger
    {
        var trigger = RegionTrigger(geometry: geometry)
        trigger.notifyOnEntry = fields.bool("notifyOnEntry") ?? true
        trigger.notifyOnExit = fields.bool("notifyOnExit") ?? true
        trigger.notifyOnDwell = fields.bool("notifyOnDwell") ?? false
        trigger.dwell = fields.seconds("dwell")
        trigger.notifyOnCross = fields.bool("notifyOnCross") ?? false
        trigger.crossing = fields.choice("crossing", as: CrossingPath.self) ?? .geodesic
        trigger.initial = fields.choice("initial", as: InitialPolicy.self) ?? .silent
        trigger.repeats = fields.bool("repeats") ?? true
        trigger.hysteresis =
            fields["hysteresis"].map { decodeHysteresis($0, path: fields.at("hysteresis"), base: defaults, sink: sink) }
            ?? defaults
        return trigger
    }

    /// A `filters` object refining `base` field by field: a number sets a check, `null` removes
    /// it, an absent field keeps `base`'s (SPEC §12).
    func decodeFilters(_ value: JSONRef?, path: String, base: PositionFilters, sink: IssueSink) -> PositionFilters {
        guard let value, !value.isNull, let fields = FieldReader(value, path: path, sink: sink) else { return base }
        fields.warnUnknown(known: Self.filterFields)
        var filters = base
        if let member = fields["maxSpeed"] { filters.maxSpeed = member.isNull ? nil : fields.number("maxSpeed") }
        if let member = fields["minDistance"] {
            filters.minDistance = member.isNull ? nil : fields.number("minDistance")
        }
        if let member = fields["maxFuture"] { filters.maxFuture = member.isNull ? nil : fields.seconds("maxFuture") }
        return filters
    }

    /// A preset name, or an object refining its `preset` (or, without one, `base`).
    func decodeHysteresis(_ value: JSONRef?, path: String, base: Hysteresis, sink: IssueSink) -> Hysteresis {
        guard let value, !value.isNull else { return base }
        func preset(_ name: String, at presetPath: String) -> Hysteresis? {
            guard let preset = Hysteresis.Preset(rawValue: name) else {
                sink.add(
                    presetPath, "unknown hysteresis preset \"\(name)\"; expected \"default\", \"naive\" or \"android\"")
                return nil
            }
            // The shared presets: requests naming one share its box.
            switch preset {
            case .default: return .default
            case .naive: return .naive
            case .android: return .android
            }
        }
        if let name = value.string { return preset(name, at: path) ?? base }
        guard let fields = FieldReader(value, path: path, sink: sink) else { return base }
        fields.warnUnknown(known: Self.hysteresisFields)
        var hysteresis = fields.string("preset").flatMap { preset($0, at: fields.at("preset")) } ?? base
        if let value = fields.number("enterCushion") { hysteresis.enterCushion = value }
        if let value = fields.number("exitCushion") { hysteresis.exitCushion = value }
        if let value = fields.seconds("enterDelay") { hysteresis.enterDelay = value }
        if let value = fields.seconds("exitDelay") { hysteresis.exitDelay = value }
        if let value = fields.integer("minFixes") { hysteresis.minFixes = value }
        if let value = fields.choice("accuracy", as: AccuracyMode.self) { hysteresis.accuracy = value }
        if let value = fields.number("maxAccuracy") { hysteresis.maxAccuracy = value }
        if let value = fields.number("enterOverlap") { hysteresis.enterOverlap = value }
        if let value = fields.number("exitOverlap") { hysteresis.exitOverlap = value }
        return hysteresis
    }

    /// A proximity trigger (SPEC §12); ranges and patterns are the validator's to check.
    private func decodeProximity(_ fields: FieldReader, sink: IssueSink) -> ProximityTrigger? {
        fields.warnUnknown(known: Self.proximityFields)
        let near = fields.number("near", required: true)
        if fields["among"] == nil { sink.add(fields.at("among"), "missing field \"among\"") }
        guard let near, let among = fields.strings("among") else { return nil }
        return ProximityTrigger(
            near: near, far: fields.number("far"), among: among.map(DevicePattern.init),
            to: fields.strings("to")?.map(DevicePattern.init), maxAge: fields.seconds("maxAge"),
            enterDelay: fields.seconds("enterDelay") ?? .zero, exitDelay: fields.seconds("exitDelay") ?? .zero,
            notifyOnEntry: fields.bool("notifyOnEntry") ?? true, notifyOnExit: fields.bool("notifyOnExit") ?? true,
            repeats: fields.bool("repeats") ?? true)
    }

    private func decodeBeacon(_ fields: FieldReader, sink: IssueSink) -> BeaconTrigger? {
        fields.warnUnknown(known: Self.beaconFields)
        guard let uuid = fields.string("uuid", required: true) else { return nil }
        var trigger = BeaconTrigger(
            uuid: uuid.uppercased(), major: fields.integer("major"), minor: fields.integer("minor"))
        trigger.proximity = fields.choice("proximity", as: Proximity.self) ?? .far
        trigger.window = fields.seconds("window") ?? trigger.window
        let filterValue = fields["filter"]
        switch (filterValue?.kind, filterValue?.string) {
        case (nil, _), (.null?, _), (.string?, "average"):
            trigger.filter = .average
        case (.string?, "arma"):
            trigger.filter = .arma(coefficient: 0.1)
        case (.object?, _):
            if let filter = FieldReader(filterValue, path: fields.at("filter"), sink: sink) {
                filter.warnUnknown(known: Self.beaconFilterFields)
                if filter.string("type") == "arma" {
                    trigger.filter = .arma(coefficient: filter.number("c") ?? 0.1)
                } else {
                    sink.add(filter.at("type"), "expected \"arma\" (the only filter with a setting)")
                }
            }
        default:
            sink.add(
                fields.at("filter"),
                "unknown filter value; expected \"average\", \"arma\" or {\"type\": \"arma\", \"c\": 0.1}"
            )
        }
        trigger.txPower = fields.number("txPower") ?? trigger.txPower
        if let model = FieldReader(
            fields["distanceModel"], path: fields.at("distanceModel"), sink: sink, required: false)
        {
            model.warnUnknown(known: Self.distanceModelFields)
            if let c1 = model.number("c1", required: true), let c2 = model.number("c2", required: true),
                let c3 = model.number("c3", required: true)
            {
                trigger.distanceModel = DistanceModel(c1: c1, c2: c2, c3: c3)
            }
        }
        trigger.enterDelay = fields.seconds("enterDelay") ?? .zero
        trigger.exitDelay = fields.seconds("exitDelay")
        trigger.exitTimeout = fields.seconds("exitTimeout") ?? trigger.exitTimeout
        trigger.notifyOnEntry = fields.bool("notifyOnEntry") ?? true
        trigger.notifyOnExit = fields.bool("notifyOnExit") ?? true
        trigger.repeats = fields.bool("repeats") ?? true
        return trigger
    }
}
