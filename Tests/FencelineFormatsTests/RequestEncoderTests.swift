import Fenceline
import FencelineFormats
import Foundation
import TestSupport
import Testing

/// ``RequestEncoder`` writes the catalog's request object (SPEC §2, §12): reading it back gives
/// an equal request, on its own and inside a catalog whose defaults would fill any field left out.
@Suite struct RequestEncoderTests {
    /// Every catalog under `Data/`: scenario `triggers.json`, other JSON catalogs and GeoJSON
    /// FeatureCollections (each scenario's `args.json` is a list of arguments, not a catalog).
    static let catalogPaths: [String] = {
        let root = Fixtures.dataDirectory
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }
            .filter { ["json", "geojson"].contains($0.pathExtension) && $0.lastPathComponent != "args.json" }
            .map { String($0.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)) }
            .sorted()
    }()

    /// Defaults unlike every preset and with every filter on: a field the encoder left out would
    /// come back as one of these.
    static let hostileDefaults =
        #""defaults":{"hysteresis":{"preset":"naive","enterCushion":7,"exitCushion":9,"enterDelay":11,"exitDelay":13,"#
        + #""minFixes":4,"accuracy":"generous","maxAccuracy":55,"enterOverlap":0.7,"exitOverlap":0.3},"#
        + #""filters":{"maxSpeed":70,"minDistance":3,"maxFuture":600}}"#

    /// `request` encoded, then decoded as the one request of a catalog with `categories` (and
    /// `defaults`, a `"defaults":{…}` member, when given); the decoder must not warn either, as it
    /// does for a field name it does not know.
    func roundTrip(_ request: NotificationRequest, categories: [String], defaults: String? = nil) throws
        -> NotificationRequest?
    {
        var writer = JSONWriter()
        writer.raw(#"{"categories":["#)
        for (index, id) in categories.enumerated() {
            writer.raw(index == 0 ? #"{"id":"# : #",{"id":"#)
            writer.string(id)
            writer.raw("}")
        }
        writer.raw("],")
        if let defaults { writer.raw(defaults + ",") }
        writer.raw(#""requests":["#)
        RequestEncoder.encode(request, into: &writer)
        writer.raw("]}")
        let decoded = try CatalogDecoder().decode(writer.bytes)
        #expect(decoded.warnings.isEmpty, "\(decoded.warnings)")
        #expect(decoded.catalog.requests.count == 1)
        return decoded.catalog.requests.first
    }

    /// Equal after a round trip with default `RequestDefaults` and with ``hostileDefaults``, and
    /// written the same the second time.
    func expectRoundTrip(_ request: NotificationRequest, categories: [String]) throws {
        let plain = try roundTrip(request, categories: categories)
        #expect(plain == request, "\(request.id): \(String(decoding: RequestEncoder.encode(request), as: UTF8.self))")
        let underDefaults = try roundTrip(request, categories: categories, defaults: Self.hostileDefaults)
        #expect(underDefaults == request, "\(request.id) under catalog defaults")
        if let plain { #expect(RequestEncoder.encode(plain) == RequestEncoder.encode(request)) }
    }

    @Test func everyBundledCatalogIsFound() {
        #expect(Self.catalogPaths.filter { $0.hasPrefix("scenarios/") }.count >= 40)
        #expect(Self.catalogPaths.contains { $0.hasSuffix(".geojson") })
        #expect(Self.catalogPaths.contains("scenarios/geojson-catalog/triggers.json"))
    }

    @Test(arguments: catalogPaths)
    func bundledCatalogRequestsRoundTrip(path: String) throws {
        let file = Fixtures.dataDirectory.appendingPathComponent(path)
        let catalog = try CatalogDecoder().decode([UInt8](Data(contentsOf: file))).catalog
        let added = try addedRequests(besides: file)
        // A scenario may start empty and add its requests by control records.
        #expect(!(catalog.requests + added).isEmpty)
        let categories = catalog.categories.map(\.id)
        for request in catalog.requests + added {
            try expectRoundTrip(request, categories: categories)
        }
    }

    /// The valid requests of the `add` records in the scenario's readings beside `catalog`, each
    /// decoded as that catalog's only request, so with its categories and defaults as a run does.
    func addedRequests(besides catalog: URL) throws -> [NotificationRequest] {
        let readings = catalog.deletingLastPathComponent().appendingPathComponent("readings.ndjson")
        guard catalog.lastPathComponent == "triggers.json",
            let text = try? String(contentsOf: readings, encoding: .utf8)
        else { return [] }
        var requests: [NotificationRequest] = []
        for line in text.split(separator: "\n") where line.contains(#""op":"add""#) {
            guard var top = try JSONSerialization.jsonObject(with: Data(contentsOf: catalog)) as? [String: Any],
                top["requests"] != nil,
                let record = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let request = record["request"]
            else { continue }
            top["requests"] = [request]
            let bytes = [UInt8](try JSONSerialization.data(withJSONObject: top))
            // Some records are invalid on purpose (the scenario checks they are refused).
            guard let decoded = try? CatalogDecoder().decode(bytes) else { continue }
            requests += decoded.catalog.requests
        }
        return requests
    }

    static let arrival = "arrival"
    static let start = Timestamp(microseconds: 1_772_438_400_123_456)  // 2026-03-02T08:00:00.123456Z
    static let expiry = Timestamp(microseconds: 1_772_524_800_250_000)  // 2026-03-03T08:00:00.250Z

    /// Content with every field set, nested `userInfo` and a number whose text is not its value's.
    static let fullContent = NotificationContent(
        title: "Depot {device}", subtitle: "Arrivals", body: "\"{device}\" {event} at {time}\n", badge: 3,
        sound: "default", category: arrival, thread: "depot-{request}",
        userInfo: JSONObject([
            ("site", .number(JSONNumber(text: "4", value: 4))),
            ("price", .number(JSONNumber(text: "1.50", value: 1.5))),
            ("big", .number(JSONNumber(text: "1.0e3", value: 1000))),
            (
                "nested",
                .object(
                    JSONObject([
                        ("tags", .array([.string("a"), .null, .bool(true), .bool(false)])),
                        ("deeper", .object(JSONObject([("n", .number(JSONNumber(text: "-0.0", value: -0)))]))),
                    ]))
            ),
            ("empty", .object(JSONObject())),
        ]),
        mutableContent: true,
        attachments: [
            NotificationAttachment(
                id: "map", url: "https://maps.example/{device}.png", type: "image/png", thumbnailHidden: false,
                thumbnailClippingRect: .init(x: 0.1, y: 0.25, width: 0.5, height: 0.75), thumbnailTime: 2.5),
            NotificationAttachment(id: "clip", url: "file:///srv/clip.mp4", type: "public.mpeg-4", thumbnailTime: 0),
            NotificationAttachment(id: "raw", url: "http://h.example/raw"),
        ])

    static let fullSchedule = Schedule(
        timeZone: "Europe/Amsterdam",
        windows: [
            Schedule.Window(days: [2, 3, 4, 5, 6], start: 8 * 60 + 5, end: 18 * 60),
            Schedule.Window(days: [7, 1], start: 22 * 60, end: 6 * 60 + 30),
            Schedule.Window(days: [1], start: 0, end: 24 * 60),
        ])

    /// A hysteresis unlike every preset in each field.
    static var fullHysteresis: Hysteresis {
        var hysteresis = Hysteresis(preset: .android)
        hysteresis.enterCushion = 5.5
        hysteresis.exitCushion = 30
        hysteresis.enterDelay = TimeSpan(seconds: 10)
        hysteresis.exitDelay = TimeSpan(microseconds: 30_500_001)
        hysteresis.minFixes = 3
        hysteresis.accuracy = .conservative
        hysteresis.maxAccuracy = 65
        hysteresis.enterOverlap = 0.9
        hysteresis.exitOverlap = 0.1
        return hysteresis
    }

    /// A region trigger with every option away from its default.
    static func fullRegion(_ geometry: RegionGeometry) -> Trigger {
        .region(
            RegionTrigger(
                geometry: geometry, notifyOnEntry: true, notifyOnExit: false, notifyOnDwell: true,
                dwell: TimeSpan(seconds: 120), notifyOnCross: true, crossing: .planar, initial: .state, repeats: false,
                hysteresis: fullHysteresis))
    }

    static func square(_ lon: Double, _ lat: Double, _ size: Double) -> [Coordinate] {
        [(0, 0), (size, 0), (size, size), (0, size), (0, 0)].map {
            Coordinate(latitude: lat + $0.1, longitude: lon + $0.0)
        }
    }

    /// One request per trigger type and geometry, each with every field it can have.
    static let handWritten: [NotificationRequest] = [
        NotificationRequest(
            id: "circle", content: fullContent,
            trigger: fullRegion(.circle(center: Coordinate(latitude: 52.370_123_4, longitude: -4.89), radius: 150.25)),
            devices: ["truck-17", "truck-18"], schedule: fullSchedule,
            filters: PositionFilters(maxSpeed: 42.5, minDistance: 3, maxFuture: TimeSpan(seconds: 90.5)),
            expires: expiry),
        NotificationRequest(
            id: "polygon-with-hole", content: NotificationContent(title: "Yard"),
            trigger: fullRegion(.polygons([[square(4.88, 52.36, 0.04), square(4.89, 52.37, 0.01)]])),
            devices: [], filters: PositionFilters(minDistance: 0)),
        NotificationRequest(
            id: "multipolygon",
            trigger: fullRegion(.polygons([[square(4.80, 52.30, 0.01)], [square(4.90, 52.40, 0.02)]])),
            expires: Timestamp(microseconds: 1_772_524_800_000_000)),
        NotificationRequest(
            id: "corridor",
            trigger: .region(
                RegionTrigger(
                    geometry: .corridor(
                        path: [
                            Coordinate(latitude: 52.37, longitude: 4.88), Coordinate(latitude: 52.38, longitude: 4.9),
                            Coordinate(latitude: 52.381, longitude: 4.95),
                        ], width: 40),
                    hysteresis: .naive)),
            filters: PositionFilters(maxFuture: .zero)),
        NotificationRequest(
            id: "dock-7", content: NotificationContent(body: "{device} at dock 7"),
            trigger: .beacon(
                BeaconTrigger(
                    uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 1, minor: 7, proximity: .near,
                    window: TimeSpan(seconds: 15), filter: .arma(coefficient: 0.25), txPower: -61.5,
                    distanceModel: DistanceModel(c1: 0.5, c2: 7, c3: 0.6), enterDelay: TimeSpan(seconds: 2),
                    exitDelay: TimeSpan(seconds: 12), exitTimeout: TimeSpan(seconds: 45), notifyOnEntry: false,
                    notifyOnExit: true, repeats: false)),
            devices: ["phone-3"], schedule: fullSchedule),
        NotificationRequest(
            id: "any-beacon",
            trigger: .beacon(
                BeaconTrigger(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 2, filter: .arma(coefficient: 0.1)))
        ),
        NotificationRequest(
            id: "ping", content: fullContent,
            trigger: .timeInterval(
                TimeIntervalTrigger(interval: TimeSpan(seconds: 300.5), repeats: true, start: start)),
            devices: ["truck-17"], schedule: fullSchedule, expires: expiry),
        NotificationRequest(
            id: "once", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(microseconds: 1)))),
        NotificationRequest(
            id: "new-year",
            trigger: .calendar(
                CalendarTrigger(
                    dateComponents: CalendarComponents(year: 2027, month: 1, day: 1, hour: 0, minute: 0, second: 30),
                    timeZone: "America/New_York", repeats: false))),
        NotificationRequest(
            id: "shift",
            trigger: .calendar(
                CalendarTrigger(
                    dateComponents: CalendarComponents(hour: 8, minute: 0, weekday: 2, weekdayOrdinal: 1),
                    timeZone: "Europe/Amsterdam", repeats: true)),
            schedule: fullSchedule),
        NotificationRequest(
            id: "convoy", content: NotificationContent(title: "{device} near {other}"),
            trigger: .proximity(
                ProximityTrigger(
                    near: 50, far: 75.5, among: [DevicePattern("tag-*"), DevicePattern("lead")],
                    to: [DevicePattern("truck-*")], maxAge: TimeSpan(seconds: 60), enterDelay: TimeSpan(seconds: 5),
                    exitDelay: TimeSpan(seconds: 10), notifyOnEntry: false, notifyOnExit: true, repeats: false)),
            devices: ["tag-1", "truck-2"], schedule: fullSchedule,
            filters: PositionFilters(maxSpeed: 60, minDistance: 2, maxFuture: TimeSpan(seconds: 30)), expires: expiry),
        NotificationRequest(
            id: "pairs", trigger: .proximity(ProximityTrigger(near: 20, among: [DevicePattern("*")]))),
    ]

    @Test(arguments: handWritten)
    func handWrittenRequestsRoundTrip(request: NotificationRequest) throws {
        try expectRoundTrip(request, categories: [Self.arrival])
    }

    /// The hand-written requests differ from the decoder's defaults in every field, so a field the
    /// encoder dropped would come back changed; this checks that premise for the fullest ones.
    @Test func handWrittenRequestsSetEveryField() throws {
        let circle = Self.handWritten[0]
        let defaults = NotificationRequest(
            id: circle.id, trigger: .region(RegionTrigger(geometry: .circle(center: Fixtures.center, radius: 1))))
        #expect(circle.devices != nil && circle.schedule != nil && circle.expires != nil)
        #expect(circle.filters.maxSpeed != nil && circle.filters.minDistance != nil && circle.filters.maxFuture != nil)
        #expect(
            circle.content.userInfo != nil && circle.content.attachments.count == 3 && circle.content.mutableContent)
        guard case .region(let full) = circle.trigger, case .region(let plain) = defaults.trigger else {
            Issue.record("not regions")
            return
        }
        #expect(full.notifyOnEntry == plain.notifyOnEntry)  // the one left on: a trigger must notify something
        #expect(full.notifyOnExit != plain.notifyOnExit && full.notifyOnDwell != plain.notifyOnDwell)
        #expect(full.dwell != plain.dwell && full.notifyOnCross != plain.notifyOnCross)
        #expect(full.crossing != plain.crossing && full.initial != plain.initial && full.repeats != plain.repeats)
        let (h, d) = (full.hysteresis, Hysteresis.default)
        #expect(h.enterCushion != d.enterCushion && h.exitCushion != d.exitCushion && h.enterDelay != d.enterDelay)
        #expect(h.exitDelay != d.exitDelay && h.minFixes != d.minFixes && h.accuracy != d.accuracy)
        #expect(h.maxAccuracy != d.maxAccuracy && h.enterOverlap != d.enterOverlap && h.exitOverlap != d.exitOverlap)
        guard case .beacon(let beacon) = Self.handWritten[4].trigger else {
            Issue.record("not a beacon")
            return
        }
        let b = BeaconTrigger(uuid: beacon.uuid)
        #expect(beacon.major != b.major && beacon.minor != b.minor && beacon.proximity != b.proximity)
        #expect(beacon.window != b.window && beacon.filter != b.filter && beacon.txPower != b.txPower)
        #expect(beacon.distanceModel != b.distanceModel && beacon.enterDelay != b.enterDelay)
        #expect(beacon.exitDelay != b.exitDelay && beacon.exitTimeout != b.exitTimeout)
        #expect(beacon.notifyOnEntry != b.notifyOnEntry && beacon.repeats != b.repeats)
    }

    /// Times keep their microseconds, which events' milliseconds would lose.
    @Test func timesKeepMicroseconds() {
        let text = String(decoding: RequestEncoder.encode(Self.handWritten[6]), as: UTF8.self)
        #expect(text.contains(#""start":"2026-03-02T08:00:00.123456Z""#))
        #expect(text.contains(#""expires":"2026-03-03T08:00:00.250Z""#))
        #expect(text.contains(#""price":1.50"#))
    }

    /// The field names and their order, pinned for one request of each trigger type.
    @Test(
        arguments: [
            (
                NotificationRequest(
                    id: "gate", content: NotificationContent(title: "Gate"),
                    trigger: .region(
                        RegionTrigger(
                            geometry: .circle(center: Coordinate(latitude: 52.37, longitude: 4.89), radius: 150))
                    ), devices: ["truck-17"]),
                #"{"id":"gate","content":{"title":"Gate"},"trigger":{"type":"region","center":{"lat":52.37,"lon":4.89},"#
                    + #""radius":150,"notifyOnEntry":true,"notifyOnExit":true,"notifyOnDwell":false,"dwell":null,"#
                    + #""notifyOnCross":false,"crossing":"geodesic","initial":"silent","repeats":true,"hysteresis":"#
                    + #"{"preset":"default","enterCushion":0,"exitCushion":20,"enterDelay":0,"exitDelay":20,"minFixes":1,"#
                    + #""accuracy":"ignore","maxAccuracy":null,"enterOverlap":0.85,"exitOverlap":0.15}},"#
                    + #""devices":["truck-17"],"filters":{"maxSpeed":null,"minDistance":null,"maxFuture":null},"#
                    + #""expires":null}"#
            ),
            (
                NotificationRequest(
                    id: "yard",
                    trigger: .region(
                        RegionTrigger(
                            geometry: .corridor(
                                path: [
                                    Coordinate(latitude: 52.37, longitude: 4.88),
                                    Coordinate(latitude: 52.38, longitude: 4.9),
                                ], width: 25), hysteresis: .android)),
                    schedule: Schedule(timeZone: "UTC", windows: [.init(days: [2, 6], start: 485, end: 1440)])),
                #"{"id":"yard","content":{},"trigger":{"type":"region","geometry":{"type":"LineString","coordinates":"#
                    + #"[[4.88,52.37],[4.9,52.38]]},"corridor":25,"notifyOnEntry":true,"notifyOnExit":true,"#
                    + #""notifyOnDwell":false,"dwell":null,"notifyOnCross":false,"crossing":"geodesic","initial":"silent","#
                    + #""repeats":true,"hysteresis":{"preset":"android","enterCushion":0,"exitCushion":0,"enterDelay":0,"#
                    + #""exitDelay":0,"minFixes":1,"accuracy":"overlap","maxAccuracy":null,"enterOverlap":0.85,"#
                    + #""exitOverlap":0.15}},"devices":null,"schedule":{"timeZone":"UTC","windows":[{"days":["mon","fri"],"#
                    + #""start":"08:05","end":"24:00"}]},"filters":{"maxSpeed":null,"minDistance":null,"maxFuture":null},"#
                    + #""expires":null}"#
            ),
            (
                NotificationRequest(
                    id: "dock",
                    trigger: .beacon(BeaconTrigger(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 1))
                ),
                #"{"id":"dock","content":{},"trigger":{"type":"beacon","uuid":"2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6","#
                    + #""major":1,"minor":null,"proximity":"far","window":20,"filter":"average","txPower":-59,"#
                    + #""distanceModel":{"c1":0.42093,"c2":6.9476,"c3":0.54992},"enterDelay":0,"exitDelay":null,"#
                    + #""exitTimeout":30,"notifyOnEntry":true,"notifyOnExit":true,"repeats":true},"devices":null,"#
                    + #""filters":{"maxSpeed":null,"minDistance":null,"maxFuture":null},"expires":null}"#
            ),
            (
                NotificationRequest(
                    id: "ping", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 300)))),
                #"{"id":"ping","content":{},"trigger":{"type":"timeInterval","seconds":300,"repeats":false,"#
                    + #""start":null},"devices":null,"filters":{"maxSpeed":null,"minDistance":null,"maxFuture":null},"#
                    + #""expires":null}"#
            ),
            (
                NotificationRequest(
                    id: "shift",
                    trigger: .calendar(
                        CalendarTrigger(dateComponents: CalendarComponents(hour: 8, minute: 0, weekday: 2)))
                ),
                #"{"id":"shift","content":{},"trigger":{"type":"calendar","dateComponents":{"hour":8,"minute":0,"#
                    + #""weekday":2},"timeZone":"UTC","repeats":false},"devices":null,"filters":{"maxSpeed":null,"#
                    + #""minDistance":null,"maxFuture":null},"expires":null}"#
            ),
            (
                NotificationRequest(
                    id: "convoy",
                    trigger: .proximity(ProximityTrigger(near: 50, among: [DevicePattern("tag-*")], to: nil))),
                #"{"id":"convoy","content":{},"trigger":{"type":"proximity","near":50,"far":50,"among":["tag-*"],"#
                    + #""to":null,"maxAge":null,"enterDelay":0,"exitDelay":0,"notifyOnEntry":true,"notifyOnExit":true,"#
                    + #""repeats":true},"devices":null,"filters":{"maxSpeed":null,"minDistance":null,"maxFuture":null},"#
                    + #""expires":null}"#
            ),
        ])
    func fieldNamesAndOrder(request: NotificationRequest, expected: String) throws {
        #expect(String(decoding: RequestEncoder.encode(request), as: UTF8.self) == expected)
        try expectRoundTrip(request, categories: [])
    }
}
