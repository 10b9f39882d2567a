import Fenceline
import FencelineFormats
import FencelineRender
import FencelineRun
import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The renderer behind `fenceline render`: well-formed, one track per device, one marker per event,
/// an exact scale bar, escaping, determinism, empty input. With `FENCELINE_RENDER_OUT=DIR` the
/// pictures are also written there, to be looked at (`Tools/render-png`).
@Suite struct TraceRendererTests {
    static let drive = Result { try Fixtures.scenario("real-drive-visnjan") }

    static func driveFixes() throws -> (catalog: Catalog, fixes: [Fix], events: [Event]) {
        let scenario = try drive.get()
        return (scenario.catalog, Self.fixes(scenario.readings), scenario.events)
    }

    static func fixes(_ readings: [Reading]) -> [Fix] {
        readings.compactMap { if case .fix(let fix) = $0 { fix } else { nil } }
    }

    @Test func realDriveIsWellFormedWithOneTrackAndAMarkerPerEvent() throws {
        let (catalog, fixes, events) = try Self.driveFixes()
        #expect(events.count == 10)
        let svg = TraceRenderer(catalog: catalog).svg(fixes: fixes, events: events)
        let tree = try #require(SVGTree(svg))
        #expect(tree.elements(class: "fl-track").map { $0.attributes["data-device"] } == ["car"])
        let markers = tree.elements(class: "fl-event")
        #expect(markers.count == events.count)
        #expect(markers.map { $0.attributes["data-seq"] } == events.map { String($0.sequence) })
        #expect(tree.text(of: markers[2], child: "title") == "#3 2020-12-18T06:17:59Z cross wayside-shrine car")
        #expect(svg.contains("1 device · 104 fixes · 10 events · 5 fences"))
    }

    @Test func fleetHasFiftyTracksAndAMarkerPerEvent() throws {
        let fleet = FleetFixture.make()
        #expect(fleet.events.count > 100)
        #expect(Set(fleet.events.map(\.kind)).isSuperset(of: [.enter, .exit, .dwell, .cross, .state]))
        let svg = TraceRenderer(catalog: fleet.catalog).svg(fixes: fleet.fixes, events: fleet.events)
        let tree = try #require(SVGTree(svg))
        let tracks = tree.elements(class: "fl-track").compactMap { $0.attributes["data-device"] }
        #expect(tracks.count == 50)
        #expect(tracks.prefix(3) == ["van-1", "van-2", "van-3"])  // natural order, not van-1, van-10
        #expect(tree.elements(class: "fl-event").count == fleet.events.count)
        #expect(svg.contains("+ 38 more devices"))
        #expect(svg.contains("1 request without a fence"))
        #expect(svg.contains(">toll-gantry</text>"))
    }

    @Test func scaleBarIsExactForTheProjection() throws {
        for (catalog, fixes, events) in [try Self.driveFixes(), FleetFixture.make()] {
            let renderer = TraceRenderer(catalog: catalog)
            let projection = try #require(renderer.projection(fixes: fixes, events: events))
            let tree = try #require(SVGTree(renderer.svg(fixes: fixes, events: events)))
            let bar = try #require(tree.elements.first { $0.attributes["id"] == "fl-scale" })
            let rects = tree.children(of: bar, named: "rect")
            #expect(rects.count == 4)
            let left = rects.compactMap { Double($0.attributes["x"] ?? "") }.min() ?? 0
            let right =
                rects.compactMap { rect in
                    Double(rect.attributes["x"] ?? "").flatMap { x in
                        Double(rect.attributes["width"] ?? "").map { x + $0 }
                    }
                }.max() ?? 0
            let metres = try #require(Double(bar.attributes["data-metres"] ?? ""))
            #expect([1.0, 2, 5].contains(metres / pow(10, log10(metres).rounded(.down))))
            #expect(abs((right - left) / (metres * projection.pixelsPerMetre) - 1) < 0.005)
            // pixelsPerMetre is true on the sphere: 1 km east and north of the centre.
            let center = Coordinate(latitude: projection.centerLatitude, longitude: projection.centerLongitude)
            let origin = projection.point(center)
            let east = projection.point(Fixtures.offset(center, east: 1000))
            let north = projection.point(Fixtures.offset(center, east: 0, north: 1000))
            #expect(abs((east.x - origin.x) / (1000 * projection.pixelsPerMetre) - 1) < 0.005)
            #expect(abs((origin.y - north.y) / (1000 * projection.pixelsPerMetre) - 1) < 0.005)
            // A great circle leaving due east bends toward the pole by d²·tan φ / 2R: 0.1 m per km here.
            #expect(abs(east.y - origin.y) < 0.2 * projection.pixelsPerMetre && abs(north.x - origin.x) < 0.05)
        }
    }

    @Test func knownPointsLandWhereExpected() throws {
        let (catalog, fixes, events) = try Self.driveFixes()
        let renderer = TraceRenderer(catalog: catalog)
        let projection = try #require(renderer.projection(fixes: fixes, events: events))
        let tree = try #require(SVGTree(renderer.svg(fixes: fixes, events: events)))
        // The map is centred in its frame, left of the legend, under the title.
        let frame = try #require(tree.elements(class: "fl-map").first)
        let (x, y, width, height) = try frame.box()
        #expect(abs(projection.centerX - (x + width / 2)) <= 0.05 && abs(projection.centerY - (y + height / 2)) <= 0.05)
        #expect(x + width < 1200 - 200)
        // Home, a 40 m circle: drawn where the projection puts its centre, 40 m across both ways.
        let home = Coordinate(latitude: 45.27340, longitude: 13.71410)
        let expected = projection.point(home)
        let dx =
            (home.longitude - projection.centerLongitude) * Earth.metresPerDegree
            * cos(projection.centerLatitude * .pi / 180) * projection.pixelsPerMetre
        #expect(abs(expected.x - (projection.centerX + dx)) < 1e-6)
        let circle = try #require(tree.elements.first { $0.name == "ellipse" })
        #expect(abs(Double(circle.attributes["cx"]!)! - expected.x) <= 0.05)
        #expect(abs(Double(circle.attributes["cy"]!)! - expected.y) <= 0.05)
        #expect(abs(Double(circle.attributes["ry"]!)! - 40 * projection.pixelsPerMetre) <= 0.05)
        let rx = 40 * projection.pixelsPerMetreEast(atLatitude: home.latitude)
        #expect(abs(Double(circle.attributes["rx"]!)! - rx) <= 0.05)
        // The first fix is the track's first point.
        let first = projection.point(fixes[0].coordinate)
        let track = try #require(tree.elements(class: "fl-track").first?.attributes["d"])
        #expect(track.hasPrefix("M\(Self.tenth(first.x)) \(Self.tenth(first.y))L"))
    }

    static func tenth(_ value: Double) -> String {
        let text = String(format: "%.1f", value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

extension TraceRendererTests {
    @Test func idsAreEscaped() throws {
        let id = #"a<b&"c'd>"#
        let catalog = Catalog(requests: [
            Fixtures.circle(id),
            NotificationRequest(id: "t\u{1}", trigger: .timeInterval(.init(interval: .init(seconds: 60)))),
        ])
        let device = #"x<&">"#
        let fixes = [0.0, 10, 20].map {
            Fix(device: device, time: Fixtures.at($0), coordinate: Fixtures.offset(east: $0 * 10))
        }
        let event = Event(
            sequence: 1, time: Fixtures.at(10), requestID: id, device: device, trigger: .region, kind: .enter)
        var options = TraceRenderer.Options()
        options.title = "Title <&>"
        let renderer = TraceRenderer(catalog: catalog, options: options)
        let svg = renderer.svg(fixes: fixes, events: [event])
        #expect(!svg.contains(id) && !svg.contains(device))
        #expect(svg.contains("a&lt;b&amp;&quot;c&#39;d&gt;"))
        let tree = try #require(SVGTree(svg))
        #expect(tree.elements(class: "fl-track").first?.attributes["data-device"] == device)
        let marker = try #require(tree.elements(class: "fl-event").first)
        // No position: drawn at the device's fix nearest in time, and says so.
        #expect(
            tree.text(of: marker, child: "title")?.hasPrefix("#1 2026-03-02T08:00:10Z enter \(id) \(device) (") == true)
        #expect(tree.elements.contains { $0.name == "text" && $0.text == id })
        #expect(tree.elements.contains { $0.name == "text" && $0.text == "Title <&>" })
        let html = renderer.html(fixes: fixes, events: [event])
        #expect(!html.contains(id) && !html.contains(device) && !html.contains("\u{1}"))
    }

    @Test func sameInputGivesTheSameBytes() throws {
        let fleet = FleetFixture.make()
        let svg = TraceRenderer(catalog: fleet.catalog).svg(fixes: fleet.fixes, events: fleet.events)
        var generator = SplitMix(state: 7)
        let shuffled = fleet.fixes.shuffled(using: &generator)
        #expect(TraceRenderer(catalog: fleet.catalog).svg(fixes: shuffled, events: fleet.events) == svg)
        let html = TraceRenderer(catalog: fleet.catalog).html(fixes: fleet.fixes, events: fleet.events)
        #expect(TraceRenderer(catalog: fleet.catalog).html(fixes: shuffled, events: fleet.events) == html)
        // Every coordinate has at most one decimal.
        #expect(svg.firstMatch(of: /="-?\d+\.\d\d/) == nil)
    }

    @Test(arguments: [
        Catalog(),
        Catalog(requests: [NotificationRequest(id: "ping", trigger: .timeInterval(.init(interval: .init(seconds: 60))))]
        ),
    ])
    func emptyInputSaysThereIsNothingToDraw(catalog: Catalog) throws {
        let renderer = TraceRenderer(catalog: catalog)
        let svg = renderer.svg(fixes: [], events: [])
        let tree = try #require(SVGTree(svg))
        #expect(tree.elements.contains { $0.name == "text" && $0.text == "Nothing to draw" })
        #expect(renderer.projection(fixes: [], events: []) == nil)
        #expect(tree.elements(class: "fl-track").isEmpty)
        let html = renderer.html(fixes: [], events: [])
        #expect(html.contains("<p>No events.</p>"))
    }

    @Test func loneFixGetsAMapOfAtLeast200Metres() throws {
        let fix = Fix(device: "d1", time: Fixtures.t0, coordinate: Fixtures.center)
        let renderer = TraceRenderer(catalog: Catalog())
        let projection = try #require(renderer.projection(fixes: [fix], events: []))
        #expect(projection.pixelsPerMetre.isFinite && projection.pixelsPerMetre > 0)
        #expect(SVGTree(renderer.svg(fixes: [fix], events: [])).map { $0.elements(class: "fl-track").count } == 1)
    }

    @Test func antimeridianTraceIsDrawnInOnePiece() throws {
        let scenario = try Fixtures.scenario("antimeridian")
        let fixes = Self.fixes(scenario.readings)
        let renderer = TraceRenderer(catalog: scenario.catalog)
        let projection = try #require(renderer.projection(fixes: fixes, events: scenario.events))
        #expect(projection.showsLongitudesFrom0To360)
        #expect(projection.pixelsPerMetre > 1e-4)  // a box of a few dozen km, not the whole globe
        let tree = try #require(SVGTree(renderer.svg(fixes: fixes, events: scenario.events)))
        let track = try #require(tree.elements(class: "fl-track").first?.attributes["d"])
        #expect(track.filter { $0 == "M" }.count == 1)
    }

    @Test func htmlPageIsSelfContained() throws {
        let (catalog, fixes, events) = try Self.driveFixes()
        let html = TraceRenderer(catalog: catalog).html(fixes: fixes, events: events)
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(html.hasSuffix("</html>\n"))
        // Nothing fetched: the only URL is the SVG namespace.
        #expect(html.ranges(of: "http").count == 1)
        #expect(html.firstMatch(of: /\s(src|href)=/) == nil)
        #expect(html.ranges(of: "<tr id=\"fl-row").count == events.count)
        let start = try #require(html.range(of: "<svg "))
        let end = try #require(html.range(of: "</svg>\n"))
        #expect(SVGTree(String(html[start.lowerBound..<end.upperBound])) != nil)
    }

    /// Image attachments appear beside their event as thumbnails (their URLs are the only
    /// resources the page loads), others as links; a hidden thumbnail is a link too.
    @Test func htmlShowsImageAttachmentsBesideTheirEvents() throws {
        var (catalog, fixes, events) = try Self.driveFixes()
        events[0].content.attachments = [
            .init(id: "site", url: "https://img.example/7.png?a=1&b=\"2\"", type: "image/png"),
            .init(id: "map", url: "file:///srv/maps/7.jpg"),
            .init(id: "clip", url: "https://img.example/7.mp4", type: "video/mp4"),
            .init(id: "hidden", url: "https://img.example/h.png", thumbnailHidden: true),
        ]
        let html = TraceRenderer(catalog: catalog).html(fixes: fixes, events: events)
        #expect(html.contains("<th>attachments</th>"))
        #expect(html.ranges(of: "<td class=\"att\">").count == events.count)
        #expect(html.contains(#"<img src="https://img.example/7.png?a=1&amp;b=&quot;2&quot;" alt="site""#))
        #expect(html.contains(#"<img src="file:///srv/maps/7.jpg" alt="map""#))
        #expect(html.contains(#"<a href="https://img.example/7.mp4" title="clip">clip</a>"#))
        #expect(html.contains(#"<a href="https://img.example/h.png" title="hidden">hidden</a>"#))
        #expect(html.ranges(of: "<img ").count == 2)
        // Without attachments there is no such column.
        let plain = TraceRenderer(catalog: catalog).html(fixes: fixes, events: try Self.driveFixes().events)
        #expect(!plain.contains("attachments"))
    }

    /// With `FENCELINE_RENDER_OUT=DIR`, writes the pictures to look at: drive, fleet, antimeridian.
    @Test func writesPicturesWhenAsked() throws {
        guard let directory = ProcessInfo.processInfo.environment["FENCELINE_RENDER_OUT"] else { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let (catalog, fixes, events) = try Self.driveFixes()
        var options = TraceRenderer.Options()
        options.title = "Real drive around Višnjan"
        var outputs = [("drive", TraceRenderer(catalog: catalog, options: options), fixes, events)]
        let fleet = FleetFixture.make()
        options.title = "Synthetic fleet: 50 vans"
        outputs.append(("fleet", TraceRenderer(catalog: fleet.catalog, options: options), fleet.fixes, fleet.events))
        let dateline = try Fixtures.scenario("antimeridian")
        options.title = "Ship across the date line"
        outputs.append(
            (
                "antimeridian", TraceRenderer(catalog: dateline.catalog, options: options),
                Self.fixes(dateline.readings),
                dateline.events
            ))
        outputs.append(("empty", TraceRenderer(catalog: Catalog()), [], []))
        for (name, renderer, fixes, events) in outputs {
            try renderer.svg(fixes: fixes, events: events).write(
                toFile: "\(directory)/\(name).svg", atomically: true, encoding: .utf8)
            try renderer.html(fixes: fixes, events: events).write(
                toFile: "\(directory)/\(name).html", atomically: true, encoding: .utf8)
        }
    }
}
