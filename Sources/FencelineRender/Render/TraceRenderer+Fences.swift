import Fenceline
import FencelineFormats
import Foundation

extension TraceRenderer {
    /// Where a fence's id would go: its centre and its half extent in pixels (a fence too small to
    /// hold its label gets it above or below instead).
    struct LabelAnchor {
        var text: String
        var x: Double
        var y: Double
        var halfWidth: Double
        var halfHeight: Double
        /// Further centres to try when every spot around the first is taken.
        var alternatives: [(x: Double, y: Double)] = []
    }

    /// Circles above this radius are drawn as geodesic polygons: an ellipse in the map's frame is
    /// only a good likeness of a disc of a few hundred kilometres.
    static let largestEllipseRadius = 200_000.0

    /// Draws every fence (translucent fill, outline, tooltip) and returns where their labels go:
    /// none above the label limit, where `drawLabels` writes none.
    func drawFences(_ scene: TraceScene, layout: Layout, projection: MapProjection, into out: inout String)
        -> [LabelAnchor]
    {
        let labelled = scene.fences.count <= options.maximumFenceLabels
        var anchors: [LabelAnchor] = []
        for (index, fence) in scene.fences.enumerated() {
            let id = SVGText.escaped(fence.id)
            switch fence.geometry {
            case .circle(let center, let radius):
                let element = Self.areaElement(fence.geometry, projection: projection)!
                out += "<\(element.tag) class=\"fl-fence\" \(element.attributes)>"
                out += "<title>\(id) · circle, radius \(SVGText.distance(radius))</title></\(element.tag)>\n"
                guard labelled else { continue }
                let (x, y) = projection.point(latitude: center.latitude, longitude: center.longitude)
                let rx = radius * projection.pixelsPerMetreEast(atLatitude: center.latitude)
                let ry = radius * projection.pixelsPerMetre
                anchors.append(LabelAnchor(text: fence.id, x: x, y: y, halfWidth: rx, halfHeight: ry))
            case .polygons(let parts):
                let holes = parts.reduce(0) { $0 + max(0, $1.count - 1) }
                var description = parts.count == 1 ? "polygon" : "\(parts.count) polygons"
                if holes > 0 { description += ", \(holes) hole\(holes == 1 ? "" : "s")" }
                let element = Self.areaElement(fence.geometry, projection: projection)!
                out += "<path class=\"fl-fence\" \(element.attributes)><title>\(id) · \(description)</title></path>\n"
                if labelled, let anchor = Self.polygonAnchor(parts, projection: projection) {
                    anchors.append(
                        LabelAnchor(
                            text: fence.id, x: anchor.x, y: anchor.y, halfWidth: anchor.halfWidth,
                            halfHeight: anchor.halfHeight))
                }
            case .corridor(let path, let width):
                drawCorridor(
                    path, width: width, id: id, index: index, layout: layout, projection: projection, into: &out)
                if labelled, let middle = Self.point(along: path, at: 0.5, projection: projection) {
                    // A band is long and thin: its label goes beside it, never across.
                    let half = width * projection.pixelsPerMetre + 1
                    var anchor = LabelAnchor(text: fence.id, x: middle.x, y: middle.y, halfWidth: 0, halfHeight: half)
                    anchor.alternatives = [0.3, 0.7].compactMap {
                        Self.point(along: path, at: $0, projection: projection)
                    }
                    anchors.append(anchor)
                }
            }
        }
        return anchors
    }

    /// The outlines of circles and polygons again, above the tracks: with many devices the lines
    /// would otherwise hide where the fences end.
    func drawFenceOutlines(_ scene: TraceScene, projection: MapProjection, into out: inout String) {
        out += "<g class=\"fl-outline\">"
        for fence in scene.fences {
            guard let element = Self.areaElement(fence.geometry, projection: projection) else { continue }
            out += "<\(element.tag) \(element.attributes)/>"
        }
        out += "</g>\n"
    }

    /// The SVG element of a circle's or polygon's area: its tag and geometry attributes (`nil` for
    /// a corridor). A circle is an ellipse with the projection's two scales at its centre, at least
    /// 2 px across so a 5 m fence on a 50 km map is still seen; a huge one a geodesic polygon.
    static func areaElement(_ geometry: RegionGeometry, projection: MapProjection) -> (
        tag: String, attributes: String
    )? {
        let n = SVGText.number
        switch geometry {
        case .circle(let center, let radius) where radius <= largestEllipseRadius:
            let (x, y) = projection.point(latitude: center.latitude, longitude: center.longitude)
            let rx = max(2, radius * projection.pixelsPerMetreEast(atLatitude: center.latitude))
            let ry = max(2, radius * projection.pixelsPerMetre)
            return ("ellipse", "cx=\"\(n(x))\" cy=\"\(n(y))\" rx=\"\(n(rx))\" ry=\"\(n(ry))\"")
        case .circle(let center, let radius):
            let ring = geodesicCircle(center: center, radius: radius)
            return ("path", "d=\"\(pathData([ring], projection: projection, closed: true))\"")
        case .polygons(let parts):
            return ("path", "d=\"\(pathData(parts.flatMap { $0 }, projection: projection, closed: true))\"")
        case .corridor:
            return nil
        }
    }

    /// A corridor as its band: a round-joined stroke 2 × width wide (width is the distance on each
    /// side of the line), with a 1 px edge cut out of a wider stroke by a mask so overlapping fences
    /// stay visible through it, and the line itself dashed.
    private func drawCorridor(
        _ path: [Coordinate], width: Double, id: String, index: Int, layout: Layout, projection: MapProjection,
        into out: inout String
    ) {
        let n = SVGText.number
        let d = Self.pathData([path], projection: projection, closed: false)
        let latitude = path.reduce(0) { $0 + $1.latitude } / Double(max(1, path.count))
        // Equal to pixelsPerMetre at the centre latitude; elsewhere the mean of north and east scales.
        let scale = (projection.pixelsPerMetre * projection.pixelsPerMetreEast(atLatitude: latitude)).squareRoot()
        let band = 2 * width * scale
        out += "<g><title>\(id) · corridor, \(SVGText.distance(width)) each side of the line</title>\n"
        if band >= 6 {
            let mask = "fl-cm\(index)"
            let area =
                "x=\"\(n(layout.mapX))\" y=\"\(n(layout.mapY))\" width=\"\(n(layout.mapWidth))\" height=\"\(n(layout.mapHeight))\""
            // Plain attributes in the mask: a class's stroke colour would override them.
            let plain = "fill=\"none\" stroke-linecap=\"round\" stroke-linejoin=\"round\""
            out += "<mask id=\"\(mask)\" maskUnits=\"userSpaceOnUse\" \(area)>"
            out += "<path d=\"\(d)\" \(plain) stroke=\"#fff\" stroke-width=\"\(n(band + 2.4))\"/>"
            out += "<path d=\"\(d)\" \(plain) stroke=\"#000\" stroke-width=\"\(n(band))\"/></mask>\n"
            out += "<path class=\"fl-band\" d=\"\(d)\" stroke-width=\"\(n(band))\"/>\n"
            out += "<path class=\"fl-edge\" d=\"\(d)\" stroke-width=\"\(n(band + 2.4))\" mask=\"url(#\(mask))\"/>\n"
        } else {
            out += "<path class=\"fl-edge\" d=\"\(d)\" stroke-opacity=\".45\" stroke-width=\"\(n(max(2, band)))\"/>\n"
        }
        out += "<path class=\"fl-axis\" d=\"\(d)\"/></g>\n"
    }

    /// SVG path data through `rings` (display longitudes), skipping points closer than 0.4 px to the
    /// previous one so a 10,000-vertex coastline costs what the pixels can show.
    static func pathData(_ rings: [[Coordinate]], projection: MapProjection, closed: Bool) -> String {
        var d = ""
        for ring in rings where !ring.isEmpty {
            var last = (x: Double.nan, y: Double.nan)
            for (index, point) in ring.enumerated() {
                let p = projection.point(latitude: point.latitude, longitude: point.longitude)
                let isEnd = index == 0 || index == ring.count - 1
                if !isEnd && abs(p.x - last.x) < 0.4 && abs(p.y - last.y) < 0.4 { continue }
                d += (index == 0 ? "M" : "L") + SVGText.point(p.x, p.y)
                last = p
            }
            if closed { d += "Z" }
        }
        return d
    }

    /// A disc of `radius` metres around `center` as 96 points on the sphere, unwrapped next to the centre.
    static func geodesicCircle(center: Coordinate, radius: Double) -> [Coordinate] {
        let angular = radius / Earth.radius
        let lat1 = center.latitude * .pi / 180
        return (0...96).map { step in
            let bearing = Double(step % 96) * 2 * .pi / 96
            let lat2 = asin(sin(lat1) * cos(angular) + cos(lat1) * sin(angular) * cos(bearing))
            let dLon = atan2(sin(bearing) * sin(angular) * cos(lat1), cos(angular) - sin(lat1) * sin(lat2))
            return Coordinate(latitude: lat2 * 180 / .pi, longitude: center.longitude + dLon * 180 / .pi)
        }
    }
}
