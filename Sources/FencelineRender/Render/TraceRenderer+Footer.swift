import Fenceline
import FencelineFormats
import Foundation

extension TraceRenderer {
    /// The longest round length (1, 2 or 5 × 10ⁿ metres) whose bar fits in `maximumPixels`.
    static func scaleBarLength(pixelsPerMetre: Double, maximumPixels: Double) -> Double {
        guard pixelsPerMetre > 0, pixelsPerMetre.isFinite else { return 1 }
        let budget = maximumPixels / pixelsPerMetre
        var power = pow(10, (log10(budget)).rounded(.down))
        var best = power
        for _ in 0..<2 {
            for step in [1.0, 2, 5] where step * power <= budget { best = max(best, step * power) }
            power *= 10
        }
        return best
    }

    /// Below the map: a scale bar exact at the centre latitude (four alternating segments,
    /// `data-metres` and `data-pixels` on its group), then the projection and the box drawn.
    func drawFooter(_ scene: TraceScene, layout: Layout, projection: MapProjection, into out: inout String) {
        let n = SVGText.number
        let metres = Self.scaleBarLength(pixelsPerMetre: projection.pixelsPerMetre, maximumPixels: layout.mapWidth / 4)
        let pixels = metres * projection.pixelsPerMetre
        let (x, y) = (layout.mapX + 4, layout.footerY + 12)
        out += "<g id=\"fl-scale\" data-metres=\"\(SVGText.fixed(metres, digits: metres < 1 ? 1 : 0))\" "
        out += "data-pixels=\"\(n(pixels))\">"
        for segment in 0..<4 {
            out += "<rect x=\"\(n(x + Double(segment) * pixels / 4))\" y=\"\(n(y))\" width=\"\(n(pixels / 4))\" "
            out +=
                "height=\"6\" fill=\"\(segment % 2 == 0 ? "#1f2937" : "#fff")\" stroke=\"#1f2937\" stroke-width=\".8\"/>"
        }
        out += "<text class=\"fl-note\" x=\"\(n(x))\" y=\"\(n(y + 20))\">0</text>"
        out += "<text class=\"fl-note\" x=\"\(n(x + pixels))\" y=\"\(n(y + 20))\" text-anchor=\"middle\">"
        out += "\(SVGText.distance(metres))</text></g>\n"
        if let bounds = scene.bounds {
            func degrees(_ value: Double, _ positive: String, _ negative: String) -> String {
                SVGText.fixed(abs(value), digits: 4) + "° " + (value < 0 ? negative : positive)
            }
            func longitude(_ value: Double) -> String {
                scene.from0To360 ? SVGText.fixed(value, digits: 4) + "°" : degrees(value, "E", "W")
            }
            var caption = "Equirectangular, scale exact at \(degrees(projection.centerLatitude, "N", "S"))"
            // The box drawn, when there is room for it beside the bar.
            if layout.mapWidth >= 640 {
                caption += " · \(degrees(bounds.south, "N", "S")) – \(degrees(bounds.north, "N", "S"))"
                caption += ", \(longitude(bounds.west)) – \(longitude(bounds.east))"
                if scene.from0To360 { caption += " (longitudes 0–360°)" }
            }
            out += "<text class=\"fl-note\" x=\"\(n(x + pixels + 40))\" y=\"\(n(y + 7))\">\(caption)</text>\n"
        }
    }
}
