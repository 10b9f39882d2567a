/// The catalog's values in a checkpoint: requests (with content, trigger, scope and schedule),
/// categories and the default hysteresis. A request read back is validated again by the engine
/// before it is installed.
extension CheckpointWriter {
    mutating func write(_ request: NotificationRequest) {
        write(request.id)
        write(request.content)
        write(request.trigger)
        write(request.devices) { $0.write(each: $1) { $0.write($1) } }
        write(request.schedule) { writer, schedule in
            writer.write(schedule.timeZone)
            writer.write(each: schedule.windows) { writer, window in
                writer.write(each: window.days.sorted()) { $0.write($1) }
                writer.write(window.start)
                writer.write(window.end)
            }
        }
        // Format 3's filters and expiry, left out of a digest when there are none (as attachments are).
        if digestsAsFormat1 && request.filters.isEmpty && request.expires == nil { return }
        write(request.filters)
        write(request.expires) { $0.write($1) }
    }

    mutating func write(_ filters: PositionFilters) {
        write(filters.maxSpeed) { $0.write($1) }
        write(filters.minDistance) { $0.write($1) }
        write(filters.maxFuture) { $0.write($1) }
    }

    mutating func write(_ content: NotificationContent) {
        for text in [content.title, content.subtitle, content.body, content.sound, content.category, content.thread] {
            write(text) { $0.write($1) }
        }
        write(content.badge) { $0.write($1) }
        write(content.userInfo) { $0.write($1) }
        write(content.mutableContent)
        // A request's digest must not change with the format: content without attachments is
        // digested as format 1 wrote it, so a resumed file's catalog is recognised.
        if digestsAsFormat1 && content.attachments.isEmpty { return }
        write(each: content.attachments) { writer, attachment in
            writer.write(attachment.id)
            writer.write(attachment.url)
            writer.write(attachment.type) { $0.write($1) }
            writer.write(attachment.thumbnailHidden) { $0.write($1) }
            writer.write(attachment.thumbnailClippingRect) { writer, rect in
                for value in [rect.x, rect.y, rect.width, rect.height] { writer.write(value) }
            }
            writer.write(attachment.thumbnailTime) { $0.write($1) }
        }
    }

    mutating func write(_ object: JSONObject) {
        write(each: object.members) { writer, member in
            writer.write(member.key)
            writer.write(member.value)
        }
    }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: write(UInt8(0))
        case .bool(let flag):
            write(UInt8(1))
            write(flag)
        case .number(let number):
            write(UInt8(2))
            write(number.text)
            write(number.value)
        case .string(let text):
            write(UInt8(3))
            write(text)
        case .array(let items):
            write(UInt8(4))
            write(each: items) { $0.write($1) }
        case .object(let object):
            write(UInt8(5))
            write(object)
        }
    }

    mutating func write(_ trigger: Trigger) {
        switch trigger {
        case .region(let region):
            write(UInt8(0))
            write(region)
        case .beacon(let beacon):
            write(UInt8(1))
            write(beacon)
        case .timeInterval(let interval):
            write(UInt8(2))
            write(interval.interval)
            write(interval.repeats)
            write(interval.start) { $0.write($1) }
        case .calendar(let calendar):
            write(UInt8(3))
            let parts = calendar.dateComponents
            for part in [
                parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second, parts.weekday,
                parts.weekdayOrdinal,
            ] {
                write(part) { $0.write($1) }
            }
            write(calendar.timeZone)
            write(calendar.repeats)
        case .proximity(let proximity):
            write(UInt8(4))
            write(proximity.near)
            write(proximity.far)
            write(each: proximity.among) { $0.write($1.text) }
            write(proximity.to) { $0.write(each: $1) { $0.write($1.text) } }
            write(proximity.maxAge) { $0.write($1) }
            write(proximity.enterDelay)
            write(proximity.exitDelay)
            write(proximity.notifyOnEntry)
            write(proximity.notifyOnExit)
            write(proximity.repeats)
        }
    }

    mutating func write(_ region: RegionTrigger) {
        switch region.geometry {
        case .circle(let center, let radius):
            write(UInt8(0))
            write(center)
            write(radius)
        case .polygons(let polygons):
            write(UInt8(1))
            write(each: polygons) { $0.write(each: $1) { $0.write(each: $1) { $0.write($1) } } }
        case .corridor(let path, let width):
            write(UInt8(2))
            write(each: path) { $0.write($1) }
            write(width)
        }
        write(region.notifyOnEntry)
        write(region.notifyOnExit)
        write(region.notifyOnDwell)
        write(region.dwell) { $0.write($1) }
        write(region.notifyOnCross)
        writeCase(region.crossing)
        writeCase(region.initial)
        write(region.repeats)
        write(region.hysteresis)
    }

    mutating func write(_ hysteresis: Hysteresis) {
        write(hysteresis.enterCushion)
        write(hysteresis.exitCushion)
        write(hysteresis.enterDelay)
        write(hysteresis.exitDelay)
        write(hysteresis.minFixes)
        writeCase(hysteresis.accuracy)
        write(hysteresis.maxAccuracy) { $0.write($1) }
        write(hysteresis.enterOverlap)
        write(hysteresis.exitOverlap)
    }

    mutating func write(_ beacon: BeaconTrigger) {
        write(beacon.uuid)
        write(beacon.major) { $0.write($1) }
        write(beacon.minor) { $0.write($1) }
        writeCase(beacon.proximity)
        write(beacon.window)
        switch beacon.filter {
        case .average: write(UInt8(0))
        case .arma(let coefficient):
            write(UInt8(1))
            write(coefficient)
        }
        write(beacon.txPower)
        write(beacon.distanceModel.c1)
        write(beacon.distanceModel.c2)
        write(beacon.distanceModel.c3)
        write(beacon.enterDelay)
        write(beacon.exitDelay) { $0.write($1) }
        write(beacon.exitTimeout)
        write(beacon.notifyOnEntry)
        write(beacon.notifyOnExit)
        write(beacon.repeats)
    }

    mutating func write(_ category: NotificationCategory) {
        write(category.id)
        write(each: category.actions) { $0.write($1) }
        write(each: category.options) { $0.write($1) }
    }

    mutating func write(_ action: NotificationAction) {
        write(action.id)
        write(action.title)
        write(each: action.options) { $0.write($1) }
        write(action.textInput) { writer, input in
            writer.write(input.button)
            writer.write(input.placeholder)
        }
    }
}

extension CheckpointReader {
    /// JSON values nest; a damaged file must not recurse without end.
    private static let deepestJSON = 512

    mutating func request() throws -> NotificationRequest {
        let id = try string()
        let content = try content()
        let trigger = try trigger()
        let devices = try optional { reader in try reader.array { try $0.string() } }
        let schedule = try optional { reader in
            let zone = try reader.string()
            let windows = try reader.array { reader in
                let days = try reader.array { try $0.int(in: 1...7, "a schedule day") }
                // Written sorted, each once: anything else would load and write itself differently.
                guard zip(days, days.dropFirst()).allSatisfy({ $0 < $1 }) else {
                    throw reader.damaged("a schedule's days are out of order")
                }
                return Schedule.Window(
                    days: Set(days), start: try reader.int(in: 0...1440, "a window start"),
                    end: try reader.int(in: 0...1440, "a window end"))
            }
            return Schedule(timeZone: zone, windows: windows)
        }
        let filters = version >= 3 ? try positionFilters() : PositionFilters()
        let expires = version >= 3 ? try optional { try $0.timestamp() } : nil
        return NotificationRequest(
            id: id, content: content, trigger: trigger, devices: devices, schedule: schedule, filters: filters,
            expires: expires)
    }

    mutating func positionFilters() throws -> PositionFilters {
        PositionFilters(
            maxSpeed: try optional { try $0.double() }, minDistance: try optional { try $0.double() },
            maxFuture: try optional { try $0.timeSpan() })
    }

    mutating func content() throws -> NotificationContent {
        var texts: [String?] = []
        for _ in 0..<6 { texts.append(try optional { try $0.string() }) }
        let badge = try optional { try $0.int() }
        let userInfo = try optional { reader in try reader.jsonObject(depth: 0) }
        var content = NotificationContent(
            title: texts[0], subtitle: texts[1], body: texts[2], badge: badge, sound: texts[3], category: texts[4],
            thread: texts[5], userInfo: userInfo, mutableContent: try bool())
        guard version >= 2 else { return content }
        content.attachments = try array(typicalSize: 32) { reader in
            var attachment = NotificationAttachment(id: try reader.string(), url: try reader.string())
            attachment.type = try reader.optional { try $0.string() }
            attachment.thumbnailHidden = try reader.optional { try $0.bool() }
            attachment.thumbnailClippingRect = try reader.optional { reader in
                NotificationAttachment.ClippingRect(
                    x: try reader.double(), y: try reader.double(), width: try reader.double(),
                    height: try reader.double())
            }
            attachment.thumbnailTime = try reader.optional { try $0.double() }
            return attachment
        }
        return content
    }

    mutating func jsonObject(depth: Int) throws -> JSONObject {
        let members = try array(typicalSize: 5) { reader in
            (key: try reader.string(), value: try reader.json(depth: depth + 1))
        }
        return JSONObject(members)
    }

    mutating func json(depth: Int) throws -> JSONValue {
        guard depth < Self.deepestJSON else { throw damaged("JSON nests too deep") }
        switch try byte() {
        case 0: return .null
        case 1: return .bool(try bool())
        case 2: return .number(JSONNumber(text: try string(), value: try double()))
        case 3: return .string(try string())
        case 4: return .array(try array { reader in try reader.json(depth: depth + 1) })
        case 5: return .object(try jsonObject(depth: depth))
        case let tag: throw damaged("JSON value kind \(tag) is unknown")
        }
    }

    mutating func trigger() throws -> Trigger {
        switch try byte() {
        case 0: return .region(try regionTrigger())
        case 1: return .beacon(try beaconTrigger())
        case 2:
            return .timeInterval(
                TimeIntervalTrigger(
                    interval: try timeSpan(), repeats: try bool(), start: try optional { try $0.timestamp() }))
        case 3:
            var parts: [Int?] = []
            for _ in 0..<8 { parts.append(try optional { try $0.int(in: -1_000_000...1_000_000, "a date component") }) }
            let components = CalendarComponents(
                year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4], second: parts[5],
                weekday: parts[6], weekdayOrdinal: parts[7])
            return .calendar(CalendarTrigger(dateComponents: components, timeZone: try string(), repeats: try bool()))
        case 4:
            let near = try double()
            let far = try double()
            let among = try array { try DevicePattern($0.string()) }
            let to = try optional { try $0.array { try DevicePattern($0.string()) } }
            return .proximity(
                ProximityTrigger(
                    near: near, far: far, among: among, to: to, maxAge: try optional { try $0.timeSpan() },
                    enterDelay: try timeSpan(), exitDelay: try timeSpan(), notifyOnEntry: try bool(),
                    notifyOnExit: try bool(), repeats: try bool()))
        case let tag: throw damaged("trigger kind \(tag) is unknown")
        }
    }

    mutating func regionTrigger() throws -> RegionTrigger {
        let geometry: RegionGeometry
        switch try byte() {
        case 0: geometry = .circle(center: try coordinate(), radius: try double())
        case 1:
            geometry = .polygons(
                try array { reader in
                    try reader.array { reader in
                        try reader.array(typicalSize: 16) { try $0.coordinate() }
                    }
                })
        case 2:
            geometry = .corridor(path: try array(typicalSize: 16) { try $0.coordinate() }, width: try double())
        case let tag: throw damaged("geometry kind \(tag) is unknown")
        }
        return RegionTrigger(
            geometry: geometry, notifyOnEntry: try bool(), notifyOnExit: try bool(), notifyOnDwell: try bool(),
            dwell: try optional { try $0.timeSpan() }, notifyOnCross: try bool(),
            crossing: try caseIndex(CrossingPath.self, "a crossing path"),
            initial: try caseIndex(InitialPolicy.self, "an initial policy"), repeats: try bool(),
            hysteresis: try hysteresis())
    }

    mutating func hysteresis() throws -> Hysteresis {
        var hysteresis = Hysteresis.default
        hysteresis.enterCushion = try double()
        hysteresis.exitCushion = try double()
        hysteresis.enterDelay = try timeSpan()
        hysteresis.exitDelay = try timeSpan()
        hysteresis.minFixes = try int(in: 1...Int(Int32.max), "minFixes")
        hysteresis.accuracy = try caseIndex(AccuracyMode.self, "an accuracy mode")
        hysteresis.maxAccuracy = try optional { try $0.double() }
        hysteresis.enterOverlap = try double()
        hysteresis.exitOverlap = try double()
        return hysteresis
    }

    mutating func beaconTrigger() throws -> BeaconTrigger {
        var beacon = BeaconTrigger(uuid: try string())
        beacon.major = try optional { try $0.int(in: 0...65_535, "a major") }
        beacon.minor = try optional { try $0.int(in: 0...65_535, "a minor") }
        beacon.proximity = try caseIndex(Proximity.self, "a proximity")
        beacon.window = try timeSpan()
        switch try byte() {
        case 0: beacon.filter = .average
        case 1: beacon.filter = .arma(coefficient: try double())
        case let tag: throw damaged("RSSI filter \(tag) is unknown")
        }
        beacon.txPower = try double()
        beacon.distanceModel = DistanceModel(c1: try double(), c2: try double(), c3: try double())
        beacon.enterDelay = try timeSpan()
        beacon.exitDelay = try optional { try $0.timeSpan() }
        beacon.exitTimeout = try timeSpan()
        beacon.notifyOnEntry = try bool()
        beacon.notifyOnExit = try bool()
        beacon.repeats = try bool()
        return beacon
    }

    mutating func category() throws -> NotificationCategory {
        NotificationCategory(
            id: try string(), actions: try array { try $0.action() }, options: try array { try $0.string() })
    }

    mutating func action() throws -> NotificationAction {
        NotificationAction(
            id: try string(), title: try string(), options: try array { try $0.string() },
            textInput: try optional { reader in
                NotificationAction.TextInput(button: try reader.string(), placeholder: try reader.string())
            })
    }
}
