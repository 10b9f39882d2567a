import Fenceline
import FencelineFormats
import Foundation

extension TraceRenderer {
    /// One path per device in time order, its colour and dash from the device's place in the
    /// sorted list; a dot per fix for few devices; a ringed dot at the start and a square at the end.
    func drawTracks(_ scene: TraceScene, layout: Layout, projection: MapProjection, into out: inout String) {
        let n = SVGText.number
        let showsFixes = options.showsFixes ?? (scene.tracks.count <= 3 && scene.fixCount <= 5000)
        let crowded = scene.tracks.count > 12
        for (index, track) in scene.tracks.enumerated() {
            let (colour, dash) = RenderStyle.trackStyle(index)
            let points = track.fixes.map {
                projection.point(latitude: $0.coordinate.latitude, longitude: $0.coordinate.longitude)
            }
            var d = ""
            var last = (x: Double.nan, y: Double.nan)
            for (offset, point) in points.enumerated() {
                // A jump of more than half a turn is the display range's edge, not a path: start over.
                let jumps =
                    offset > 0
                    && abs(track.fixes[offset].coordinate.longitude - track.fixes[offset - 1].coordinate.longitude)
                        > 180
                let isLast = offset == points.count - 1
                if !jumps && offset > 0 && !isLast && abs(point.x - last.x) < 0.5 && abs(point.y - last.y) < 0.5 {
                    continue
                }
                d += (offset == 0 || jumps ? "M" : "L") + SVGText.point(point.x, point.y)
                last = point
            }
            if points.count == 1 { d += "h0" }
            let first = track.fixes.first!.time
            let end = track.fixes.last!.time
            out += "<path class=\"fl-track\" data-device=\"\(SVGText.escaped(track.device))\" d=\"\(d)\" "
            out += "stroke=\"\(colour)\" stroke-width=\"\(n(layout.trackWidth))\""
            if !dash.isEmpty { out += " stroke-dasharray=\"\(dash)\"" }
            if crowded { out += " stroke-opacity=\".85\"" }
            out += "><title>\(SVGText.escaped(track.device)) · \(track.fixes.count) fix"
            out += "\(track.fixes.count == 1 ? "" : "es"), \(first.rfc3339) – \(end.rfc3339)</title></path>\n"
            if showsFixes {
                out += "<g fill=\"#fff\" stroke=\"\(colour)\" stroke-width=\"1\">"
                for point in points { out += "<circle cx=\"\(n(point.x))\" cy=\"\(n(point.y))\" r=\"1.9\"/>" }
                out += "</g>\n"
            }
            if scene.tracks.count <= 5 {
                out += "<g fill=\"\(colour)\">"
                for arrow in Self.arrows(along: points) {
                    out += "<path d=\"M5 0L-4-4.5L-2 0L-4 4.5Z\" "
                    out += "transform=\"translate(\(n(arrow.x)) \(n(arrow.y))) rotate(\(n(arrow.degrees)))\"/>"
                }
                out += "</g>\n"
            }
        }
        // Start and end markers above every line, so a later track never hides where another began.
        let radius = crowded ? 3.0 : 4.5
        for (index, points) in scene.tracks.enumerated().map({ ($0.offset, $0.element.fixes) }) {
            let colour = RenderStyle.trackStyle(index).colour
            let start = projection.point(
                latitude: points[0].coordinate.latitude, longitude: points[0].coordinate.longitude)
            let end = projection.point(
                latitude: points[points.count - 1].coordinate.latitude,
                longitude: points[points.count - 1].coordinate.longitude)
            out += "<circle cx=\"\(n(start.x))\" cy=\"\(n(start.y))\" r=\"\(n(radius))\" fill=\"\(colour)\" "
            out += "stroke=\"#fff\" stroke-width=\"1.5\"/>"
            out += "<rect x=\"\(n(end.x - radius))\" y=\"\(n(end.y - radius))\" width=\"\(n(2 * radius))\" "
            out += "height=\"\(n(2 * radius))\" fill=\"\(colour)\" stroke=\"#fff\" stroke-width=\"1.5\"/>\n"
        }
    }

    /// Where arrowheads showing the direction of travel go: every 140 px along the drawn line,
    /// the first 70 px in, each turned along its segment (degrees clockwise from east, y down).
    static func arrows(along points: [(x: Double, y: Double)]) -> [(x: Double, y: Double, degrees: Double)] {
        var arrows: [(x: Double, y: Double, degrees: Double)] = []
        var next = 70.0
        var travelled = 0.0
        for index in points.indices.dropFirst() {
            let (a, b) = (points[index - 1], points[index])
            let length = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
            guard length > 0 else { continue }
            while next <= travelled + length {
                let t = (next - travelled) / length
                arrows.append((a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), atan2(b.y - a.y, b.x - a.x) * 180 / .pi))
                next += 140
            }
            travelled += length
        }
        return arrows
    }

    /// A marker per placed event, its shape and colour from its kind, with a tooltip
    /// `#seq time kind request device` and data attributes the HTML page reads.
    func drawEvents(_ scene: TraceScene, layout: Layout, projection: MapProjection, into out: inout String) {
        let n = SVGText.number
        var symbols: [EventKind: String] = [:]
        for kind in EventKind.allCases { symbols[kind] = RenderStyle.symbol(of: kind, radius: layout.markerRadius) }
        for (index, mark) in scene.marks.enumerated() {
            let event = mark.event
            let (x, y) = projection.point(latitude: mark.coordinate.latitude, longitude: mark.coordinate.longitude)
            var tooltip =
                "#\(event.sequence) \(event.time.rfc3339) \(event.kindLabel) \(event.requestID) \(event.device ?? "-")"
            if mark.isEstimated { tooltip += " (no position: drawn at the nearest fix)" }
            out += "<g class=\"fl-event\" id=\"fl-ev\(index)\" data-seq=\"\(event.sequence)\" "
            out += "transform=\"translate(\(n(x)) \(n(y)))\"><title>\(SVGText.escaped(tooltip))</title>"
            out += "<path d=\"\(symbols[event.kind]!)\" fill=\"\(RenderStyle.colour(of: event.kind))\""
            if mark.isEstimated { out += " fill-opacity=\".6\"" }
            out += "/></g>\n"
        }
    }
}
