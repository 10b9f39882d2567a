import Fenceline
import FencelineFormats
import Foundation

/// Colours, dashes and symbols of the picture, in one place so the legend and the map agree.
enum RenderStyle {
    /// Track colours: saturated and dark enough on a light map, apart from each other, and clear
    /// of the fence slate and the event colours' exact hues.
    static let palette = [
        "#1f5fbf", "#e4572e", "#2a9d3f", "#a23bbd", "#f29e0c", "#17a2b8", "#8c564b", "#e0468c",
        "#6b8e23", "#283d8a", "#b8336a", "#0b7a6b",
    ]
    /// Dash patterns for the second, third and fourth round of colours: 48 devices before a
    /// colour and dash repeat.
    static let dashes = ["", "7 4", "2 3", "9 3 2 3"]

    /// The colour and dash of the device at `index` in the sorted device list.
    static func trackStyle(_ index: Int) -> (colour: String, dash: String) {
        (palette[index % palette.count], dashes[index / palette.count % dashes.count])
    }

    /// The fill colour of an event kind's marker.
    static func colour(of kind: EventKind) -> String {
        switch kind {
        case .enter: "#15a34a"
        case .exit: "#dc2626"
        case .dwell: "#f5b301"
        case .cross: "#7c3aed"
        case .state: "#6b7280"
        case .fire: "#111827"
        case .response: "#0284c7"
        }
    }

    /// The kinds the legend always lists; `fire` only when one is present.
    static let legendKinds: [EventKind] = [.enter, .exit, .dwell, .cross, .state]

    /// The outline of an event kind's marker centred at (0, 0), about `2 r` across.
    static func symbol(of kind: EventKind, radius r: Double) -> String {
        func n(_ value: Double) -> String { SVGText.number(value) }
        switch kind {
        case .enter:  // a triangle pointing up: coming in
            return "M0 \(n(-1.15 * r))L\(SVGText.point(r, 0.75 * r))L\(SVGText.point(-r, 0.75 * r))Z"
        case .exit:  // pointing down: going out
            return "M0 \(n(1.15 * r))L\(SVGText.point(r, -0.75 * r))L\(SVGText.point(-r, -0.75 * r))Z"
        case .dwell:  // a square: staying
            return "M\(SVGText.point(-0.8 * r, -0.8 * r))H\(n(0.8 * r))V\(n(0.8 * r))H\(n(-0.8 * r))Z"
        case .cross:  // an X: passing through
            let a = 0.3 * r
            let b = r
            let points: [(Double, Double)] = [
                (0, -a), (b - a, -b), (b, -b + a), (a, 0), (b, b - a), (b - a, b),
                (0, a), (-b + a, b), (-b, b - a), (-a, 0), (-b, -b + a), (-b + a, -b),
            ]
            return polygon(points)
        case .state:  // a circle: a plain observation
            return "M\(n(r)) 0A\(n(r)) \(n(r)) 0 1 0 \(n(-r)) 0A\(n(r)) \(n(r)) 0 1 0 \(n(r)) 0Z"
        case .fire:  // a five-pointed star
            let points = (0..<10).map { index -> (Double, Double) in
                let angle = Double(index) * Double.pi / 5 - Double.pi / 2
                let length = index % 2 == 0 ? 1.2 * r : 0.5 * r
                return (length * cos(angle), length * sin(angle))
            }
            return polygon(points)
        case .response:  // a diamond: an answer from the device
            return polygon([(0, -1.1 * r), (1.1 * r, 0), (0, 1.1 * r), (-1.1 * r, 0)])
        }
    }

    private static func polygon(_ points: [(Double, Double)]) -> String {
        var d = ""
        for (index, point) in points.enumerated() {
            d += (index == 0 ? "M" : "L") + SVGText.point(point.0, point.1)
        }
        return d + "Z"
    }
}
