import Fenceline
import Foundation
import TestSupport

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An SVG document read back with Foundation's XMLParser: `nil` unless it is well-formed XML.
final class SVGTree: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text = ""
        var parent: Int?

        /// x, y, width and height of a `rect`.
        func box() throws -> (Double, Double, Double, Double) {
            let values = ["x", "y", "width", "height"].compactMap { attributes[$0].flatMap(Double.init) }
            guard values.count == 4 else { throw CocoaError(.coderReadCorrupt) }
            return (values[0], values[1], values[2], values[3])
        }
    }

    private(set) var elements: [Element] = []
    private var open: [Int] = []

    init?(_ text: String) {
        super.init()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = self
        guard parser.parse(), elements.first?.name == "svg" else { return nil }
    }

    func elements(class name: String) -> [Element] {
        elements.filter { ($0.attributes["class"] ?? "").split(separator: " ").contains(Substring(name)) }
    }

    func children(of element: Element, named name: String) -> [Element] {
        guard let index = elements.firstIndex(where: { $0.attributes == element.attributes && $0.name == element.name })
        else { return [] }
        return elements.filter { $0.parent == index && $0.name == name }
    }

    func text(of element: Element, child name: String) -> String? {
        children(of: element, named: name).first?.text
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        elements.append(Element(name: name, attributes: attributes, parent: open.last))
        open.append(elements.count - 1)
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let current = open.last { elements[current].text += string }
    }
}

/// Fifty vans wandering around Amsterdam's test centre for 20 minutes, among circles, a polygon
/// with a hole, a two-part multipolygon, a concave polygon and a corridor; deterministic.
enum FleetFixture {
    static func make() -> (catalog: Catalog, fixes: [Fix], events: [Event]) {
        let catalog = Catalog(requests: fences)
        var generator = SplitMix(state: 2026)
        var fixes: [Fix] = []
        for van in 1...50 {
            var east = Double.random(in: -2200...2200, using: &generator)
            var north = Double.random(in: -1600...1600, using: &generator)
            var heading = Double.random(in: 0..<(2 * .pi), using: &generator)
            let speed = Double.random(in: 4...12, using: &generator)
            for step in 0..<120 {
                fixes.append(
                    Fix(
                        device: "van-\(van)", time: Fixtures.at(Double(step * 10 + van % 7)),
                        coordinate: Fixtures.offset(east: east, north: north)))
                heading += Double.random(in: -0.5...0.5, using: &generator)
                // Turn back toward the middle when far out, so the fleet stays on the map.
                if (east * east + north * north).squareRoot() > 2600 { heading = atan2(-east, -north) }
                let pause = Double.random(in: 0..<1, using: &generator) < 0.08
                east += pause ? 0 : sin(heading) * speed * 10
                north += pause ? 0 : cos(heading) * speed * 10
            }
        }
        let ordered = fixes.sorted { ($0.time, $0.device) < ($1.time, $1.device) }
        let events = (try? Fixtures.run(catalog.requests, ordered.map(Reading.fix))) ?? []
        return (catalog, ordered, events)
    }

    static func ring(_ points: [(east: Double, north: Double)]) -> [Coordinate] {
        let ring = points.map { Fixtures.offset(east: $0.east, north: $0.north) }
        return ring + [ring[0]]
    }

    static func rectangle(_ west: Double, _ south: Double, _ east: Double, _ north: Double) -> [Coordinate] {
        ring([(west, south), (east, south), (east, north), (west, north)])
    }

    static let fences: [NotificationRequest] = [
        Fixtures.circle("central-station", radius: 260) {
            $0.notifyOnDwell = true; $0.dwell = TimeSpan(seconds: 60)
        },
        Fixtures.circle("museum", center: Fixtures.offset(east: -1300, north: 800), radius: 150) {
            $0.notifyOnCross = true
        },
        NotificationRequest(
            id: "toll-gantry",
            trigger: .region(
                RegionTrigger(
                    geometry: .polygons([[rectangle(-400, -1100, -392, -300)]]), notifyOnEntry: false,
                    notifyOnExit: false, notifyOnCross: true))),
        Fixtures.circle(
            "depot-north", center: Fixtures.offset(east: 1500, north: 1200), radius: 200,
            devices: (1...6).map { "van-\($0)" }
        ) { $0.initial = .state },
        NotificationRequest(
            id: "harbour",
            trigger: .region(
                RegionTrigger(
                    geometry: .polygons([[rectangle(600, -1400, 1900, -500), rectangle(1000, -1100, 1500, -800)]])))),
        NotificationRequest(
            id: "islands",
            trigger: .region(
                RegionTrigger(
                    geometry: .polygons([
                        [rectangle(-2100, -1500, -1500, -1000)], [rectangle(-1300, -1400, -900, -1100)],
                    ])))),
        NotificationRequest(
            id: "park",
            trigger: .region(
                RegionTrigger(
                    geometry: .polygons([
                        [ring([(-600, 900), (200, 900), (200, 1500), (0, 1500), (0, 1100), (-600, 1100)])]
                    ])))),
        NotificationRequest(
            id: "ring-road",
            trigger: .region(
                RegionTrigger(
                    geometry: .corridor(
                        path: [(-2600, -300), (-1200, 300), (300, -200), (1800, 200), (2600, 900)].map {
                            Fixtures.offset(east: $0.0, north: $0.1)
                        }, width: 40)))),
        NotificationRequest(
            id: "hourly", trigger: .timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 3600)))),
    ]
}
