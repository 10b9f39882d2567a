import Fenceline
import FencelineFormats

extension TraceRenderer {
    /// One line of the legend panel.
    enum LegendRow {
        case heading(String)
        case event(EventKind, count: Int)
        case device(index: Int, id: String)
        case trackEnds
        case area(String)
        case band(String)
        case note(String)
        case gap
        case north

        var height: Double {
            switch self {
            case .heading: 24
            case .event, .device, .trackEnds, .area, .band: 19
            case .note: 17
            case .gap: 10
            case .north: 52
            }
        }
    }

    func legendRows(_ scene: TraceScene) -> [LegendRow] {
        var rows: [LegendRow] = [.heading("Events")]
        let counts = scene.eventCounts
        for (index, kind) in EventKind.allCases.enumerated()
        where RenderStyle.legendKinds.contains(kind) || counts[index] > 0 {
            rows.append(.event(kind, count: counts[index]))
        }
        if !scene.unplacedEvents.isEmpty {
            rows.append(.note("\(scene.unplacedEvents.count) without a place, not drawn"))
        }
        rows += [.gap, .heading("Devices (\(scene.tracks.count))")]
        for (index, track) in scene.tracks.prefix(options.maximumLegendDevices).enumerated() {
            rows.append(.device(index: index, id: track.device))
        }
        let hidden = scene.tracks.count - options.maximumLegendDevices
        if hidden > 0 { rows.append(.note("+ \(hidden) more device\(hidden == 1 ? "" : "s")")) }
        if !scene.tracks.isEmpty { rows.append(.trackEnds) }
        rows += [.gap, .heading("Fences (\(scene.fences.count))")]
        var kinds = (circles: 0, polygons: 0, corridors: 0)
        for fence in scene.fences {
            switch fence.geometry {
            case .circle: kinds.circles += 1
            case .polygons: kinds.polygons += 1
            case .corridor: kinds.corridors += 1
            }
        }
        let areas = [(kinds.circles, "circle"), (kinds.polygons, "polygon")].filter { $0.0 > 0 }
        if !areas.isEmpty {
            rows.append(.area(areas.map { "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")" }.joined(separator: ", ")))
        }
        if kinds.corridors > 0 { rows.append(.band("\(kinds.corridors) corridor\(kinds.corridors == 1 ? "" : "s")")) }
        if scene.fences.count > options.maximumFenceLabels {
            rows.append(.note("ids in tooltips only (> \(options.maximumFenceLabels))"))
        }
        if scene.requestsWithoutFence > 0 {
            let count = scene.requestsWithoutFence
            rows.append(.note("\(count) request\(count == 1 ? "" : "s") without a fence"))
            rows.append(.note("(beacon, proximity, time, calendar)"))
        }
        if scene.bounds != nil { rows += [.gap, .north] }
        return rows
    }

    func legendHeight(_ scene: TraceScene) -> Double {
        legendRows(scene).reduce(24) { $0 + $1.height }
    }

    func drawLegend(_ scene: TraceScene, layout: Layout, into out: inout String) {
        let n = SVGText.number
        let x = layout.legendX
        out += "<g class=\"fl-legend\">\n"
        out += "<rect x=\"\(n(x))\" y=\"\(n(layout.mapY))\" width=\"\(n(Self.legendWidth - 12))\" "
        out += "height=\"\(n(layout.mapHeight))\" fill=\"#fff\" stroke=\"#c9d0da\"/>\n"
        var y = layout.mapY + 12
        let textX = n(x + 42)
        for row in legendRows(scene) {
            let baseline = n(y + row.height - 5)
            let middle = y + row.height / 2
            switch row {
            case .heading(let text):
                out += "<text class=\"fl-h\" x=\"\(n(x + 12))\" y=\"\(baseline)\">\(SVGText.escaped(text))</text>\n"
            case .event(let kind, let count):
                let symbol = RenderStyle.symbol(of: kind, radius: 6)
                out += "<g transform=\"translate(\(n(x + 24)) \(n(middle)))\">"
                out += "<path d=\"\(symbol)\" fill=\"\(RenderStyle.colour(of: kind))\"/></g>"
                out += "<text x=\"\(textX)\" y=\"\(baseline)\">\(kind.rawValue)</text>"
                out +=
                    "<text x=\"\(n(x + Self.legendWidth - 26))\" y=\"\(baseline)\" text-anchor=\"end\">\(SVGText.grouped(count))</text>\n"
            case .device(let index, let id):
                let (colour, dash) = RenderStyle.trackStyle(index)
                out += "<path d=\"M\(n(x + 12)) \(n(middle))h24\" stroke=\"\(colour)\" stroke-width=\"2.6\""
                if !dash.isEmpty { out += " stroke-dasharray=\"\(dash)\"" }
                out +=
                    "/><text x=\"\(textX)\" y=\"\(baseline)\">\(SVGText.escaped(SVGText.truncated(id, to: 24)))</text>\n"
            case .trackEnds:
                out += "<circle cx=\"\(n(x + 18))\" cy=\"\(n(middle))\" r=\"4.5\" fill=\"#6b7280\" stroke=\"#fff\"/>"
                out += "<rect x=\"\(n(x + 26))\" y=\"\(n(middle - 4.5))\" width=\"9\" height=\"9\" fill=\"#6b7280\"/>"
                out += "<text x=\"\(textX)\" y=\"\(baseline)\">track start, end</text>\n"
            case .area(let text):
                out += "<rect class=\"fl-fence\" x=\"\(n(x + 12))\" y=\"\(n(middle - 6))\" width=\"24\" height=\"12\"/>"
                out += "<text x=\"\(textX)\" y=\"\(baseline)\">\(text)</text>\n"
            case .band(let text):
                out += "<path class=\"fl-band\" d=\"M\(n(x + 17)) \(n(middle))h14\" stroke-width=\"10\"/>"
                out += "<path class=\"fl-axis\" d=\"M\(n(x + 12)) \(n(middle))h24\"/>"
                out += "<text x=\"\(textX)\" y=\"\(baseline)\">\(text)</text>\n"
            case .note(let text):
                out += "<text class=\"fl-note\" x=\"\(n(x + 12))\" y=\"\(baseline)\">\(SVGText.escaped(text))</text>\n"
            case .gap:
                break
            case .north:
                let cx = x + 24
                out += "<path d=\"M\(n(cx)) \(n(y + 4))l8 26l-8-6l-8 6z\" fill=\"#1f2937\"/>"
                out += "<text x=\"\(n(cx))\" y=\"\(n(y + 46))\" text-anchor=\"middle\" class=\"fl-h\">N</text>"
                out += "<text class=\"fl-note\" x=\"\(textX)\" y=\"\(n(y + 22))\">north up</text>\n"
            }
            y += row.height
        }
        out += "</g>\n"
    }
}
