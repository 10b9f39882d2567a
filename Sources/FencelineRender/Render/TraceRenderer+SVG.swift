import Fenceline
import FencelineFormats
import Foundation

extension TraceRenderer {
    /// The `<svg>` element (no XML declaration, so the HTML page can embed it as is).
    func svgElement(_ scene: TraceScene, layout: Layout) -> String {
        let n = SVGText.number
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(n(layout.width))" height="\(n(layout.height))" \
            viewBox="0 0 \(n(layout.width)) \(n(layout.height))" font-family="DejaVu Sans, Verdana, Arial, sans-serif">

            """
        out += "<title>\(SVGText.escaped(title))</title>\n"
        out += "<style>\(Self.stylesheet)</style>\n"
        out += "<rect width=\"\(n(layout.width))\" height=\"\(n(layout.height))\" fill=\"#fff\"/>\n"
        if layout.hasHeader { drawHeader(scene, layout: layout, into: &out) }
        let frame =
            "x=\"\(n(layout.mapX))\" y=\"\(n(layout.mapY))\" width=\"\(n(layout.mapWidth))\" height=\"\(n(layout.mapHeight))\""
        out += "<rect class=\"fl-map\" \(frame)/>\n"
        if let projection = layout.projection {
            out += "<clipPath id=\"fl-clip\"><rect \(frame)/></clipPath>\n"
            out += "<g id=\"fl-data\" clip-path=\"url(#fl-clip)\">\n"
            let labels = drawFences(scene, layout: layout, projection: projection, into: &out)
            drawTracks(scene, layout: layout, projection: projection, into: &out)
            if scene.tracks.count > 12 { drawFenceOutlines(scene, projection: projection, into: &out) }
            drawEvents(scene, layout: layout, projection: projection, into: &out)
            // Last, so a label that had to go over a marker is still read; the marker keeps its tooltip.
            drawLabels(labels, scene: scene, layout: layout, projection: projection, into: &out)
            out += "</g>\n"
            drawFooter(scene, layout: layout, projection: projection, into: &out)
        } else {
            let x = n(layout.mapX + layout.mapWidth / 2)
            let y = layout.mapY + layout.mapHeight / 2
            out += "<text class=\"fl-empty\" x=\"\(x)\" y=\"\(n(y))\">Nothing to draw</text>\n"
            out += "<text class=\"fl-note\" text-anchor=\"middle\" x=\"\(x)\" y=\"\(n(y + 24))\">"
            out += "no fixes, no fences and no events with a place</text>\n"
        }
        drawLegend(scene, layout: layout, into: &out)
        out += "</svg>\n"
        return out
    }

    /// The title line: the option's title or a default.
    var title: String { options.title ?? "Fenceline trace" }

    private func drawHeader(_ scene: TraceScene, layout: Layout, into out: inout String) {
        out += "<text class=\"fl-title\" x=\"12\" y=\"27\">\(SVGText.escaped(title))</text>\n"
        out += "<text class=\"fl-sub\" x=\"12\" y=\"48\">\(SVGText.escaped(summary(scene)))</text>\n"
    }

    /// "2020-12-18 06:15:50 – 06:24:10 UTC (8 min 20 s) · 1 device · 104 fixes · 10 events · 5 fences".
    func summary(_ scene: TraceScene) -> String {
        var parts: [String] = []
        if let first = scene.firstTime, let last = scene.lastTime {
            let start = first.rfc3339.dropLast().replacingOccurrences(of: "T", with: " ")
            var end = last.rfc3339.dropLast().replacingOccurrences(of: "T", with: " ")
            if end.prefix(10) == start.prefix(10) { end = String(end.dropFirst(11)) }
            let span = SVGText.duration(seconds: last.span(since: first).seconds)
            parts.append(first == last ? "\(start) UTC" : "\(start) – \(end) UTC (\(span))")
        }
        func count(_ value: Int, _ noun: String, plural: String? = nil) -> String {
            counted(value, noun, plural: plural, digits: SVGText.grouped)
        }
        parts.append(count(scene.tracks.count, "device"))
        parts.append(count(scene.fixCount, "fix", plural: "fixes"))
        parts.append(count(scene.marks.count + scene.unplacedEvents.count, "event"))
        parts.append(count(scene.fences.count, "fence"))
        return parts.joined(separator: " · ")
    }

    static let stylesheet = """
        .fl-title{font-size:18px;font-weight:bold;fill:#111827}\
        .fl-sub{font-size:12.5px;fill:#4b5563}\
        .fl-map{fill:#f6f7f9;stroke:#c9d0da}\
        .fl-fence{fill:#64748b;fill-opacity:.17;fill-rule:evenodd;stroke:#475569;stroke-width:1.2;stroke-linejoin:round}\
        .fl-band{fill:none;stroke:#64748b;stroke-opacity:.17;stroke-linecap:round;stroke-linejoin:round}\
        .fl-edge{fill:none;stroke:#475569;stroke-linecap:round;stroke-linejoin:round}\
        .fl-outline{fill:none;stroke:#334155;stroke-width:1.2;stroke-opacity:.75;stroke-linejoin:round}\
        .fl-axis{fill:none;stroke:#475569;stroke-width:.8;stroke-dasharray:5 4;stroke-opacity:.7}\
        .fl-label{font-size:11px;fill:#334155;stroke:#fff;stroke-width:3px;stroke-linejoin:round;\
        paint-order:stroke;text-anchor:middle;pointer-events:none}\
        .fl-track{fill:none;stroke-linecap:round;stroke-linejoin:round}\
        .fl-event path{stroke:#fff;stroke-width:1.3;stroke-linejoin:round}\
        .fl-legend text{font-size:12px;fill:#1f2937}\
        .fl-legend .fl-h{font-weight:bold;font-size:12.5px}\
        .fl-note{font-size:11px;fill:#6b7280}\
        .fl-empty{font-size:20px;fill:#6b7280;text-anchor:middle}
        """
}
