import Fenceline
import FencelineFormats

extension TraceRenderer {
    typealias Box = (x0: Double, y0: Double, x1: Double, y1: Double)

    /// Writes fence ids where they read best: inside a fence with room for them, else just above it,
    /// below it, or beside it (a corridor tries the middle of its line, then a third of the way
    /// from either end). The first spot clear of other labels, markers, other small fences and track
    /// lines wins; failing that, the first clear of all but the lines, then of labels and fences,
    /// then of labels and markers, then of labels; else the label is left out (its fence keeps the
    /// id in its tooltip). None above the label limit.
    func drawLabels(
        _ anchors: [LabelAnchor], scene: TraceScene, layout: Layout, projection: MapProjection,
        into out: inout String
    ) {
        guard !anchors.isEmpty, anchors.count <= options.maximumFenceLabels else { return }
        let n = SVGText.number
        let (markers, lines) = labelObstacles(scene, layout: layout, projection: projection)
        // Fences small enough that a label over them would seem to name them.
        let fences: [Box] = anchors.map { anchor in
            guard anchor.halfWidth > 0, anchor.halfWidth < layout.mapWidth / 8 else { return (0, 0, 0, 0) }
            return (
                anchor.x - anchor.halfWidth, anchor.y - anchor.halfHeight, anchor.x + anchor.halfWidth,
                anchor.y + anchor.halfHeight
            )
        }
        var placed: [Box] = []
        for (index, anchor) in anchors.enumerated() {
            let text = SVGText.truncated(anchor.text, to: 32)
            let spots = labelSpots(anchor, halfWidth: Double(text.count) * Self.labelFontSize * 0.31 + 2)
            func onMap(_ box: Box) -> Bool {
                box.x0 >= layout.mapX && box.x1 <= layout.mapX + layout.mapWidth && box.y0 >= layout.mapY
                    && box.y1 <= layout.mapY + layout.mapHeight
            }
            func clear(_ box: Box, of others: [Box]) -> Bool { !others.contains { Self.overlap($0, box) } }
            let otherFences = fences.enumerated().filter { $0.offset != index }.map(\.element)
            let candidates = spots.filter { onMap($0.box) && clear($0.box, of: placed) }
            // Seeming to name another fence misleads more than hiding a marker, which has a tooltip.
            let tiers: [[[Box]]] = [
                [markers, otherFences, lines], [markers, otherFences], [otherFences], [markers], [],
            ]
            let choice = tiers.lazy.compactMap { tier in
                candidates.first { spot in tier.allSatisfy { clear(spot.box, of: $0) } }
            }.first
            guard let choice else { continue }
            placed.append(choice.box)
            out +=
                "<text class=\"fl-label\" x=\"\(n(choice.x))\" y=\"\(n(choice.y))\">\(SVGText.escaped(text))</text>\n"
        }
    }

    static let labelFontSize = 11.0

    /// Where a label may go, best first, with the box its text covers (baseline at `y`).
    private func labelSpots(_ anchor: LabelAnchor, halfWidth: Double) -> [(x: Double, y: Double, box: Box)] {
        let fontSize = Self.labelFontSize
        var spots: [(x: Double, y: Double)] = []
        if anchor.halfHeight >= 24 && anchor.halfWidth >= halfWidth + 6 {
            let (x, y, half) = (anchor.x, anchor.y + 4, anchor.halfHeight / 2)
            spots += [(x, y), (x, y - half), (x, y + half)]
        }
        for (x, y) in [(anchor.x, anchor.y)] + anchor.alternatives {
            spots += [
                (x, y - anchor.halfHeight - 5), (x, y + anchor.halfHeight + fontSize + 3),
                (x + anchor.halfWidth + halfWidth + 5, y + 4), (x - anchor.halfWidth - halfWidth - 5, y + 4),
            ]
        }
        return spots.map { spot in
            (
                spot.x, spot.y,
                (spot.x - halfWidth - 1.5, spot.y - fontSize - 0.5, spot.x + halfWidth + 1.5, spot.y + 3.5)
            )
        }
    }

    /// Boxes a label should not cover: event and track-end markers, and the track lines as small
    /// boxes every 8 px (not above 20,000 fixes, where nothing would be clear of them anyway).
    private func labelObstacles(_ scene: TraceScene, layout: Layout, projection: MapProjection) -> (
        markers: [Box], lines: [Box]
    ) {
        var markers: [Box] = []
        func mark(_ coordinate: Coordinate, _ radius: Double) {
            let (x, y) = projection.point(latitude: coordinate.latitude, longitude: coordinate.longitude)
            markers.append((x - radius, y - radius, x + radius, y + radius))
        }
        for item in scene.marks { mark(item.coordinate, layout.markerRadius + 1) }
        for track in scene.tracks {
            mark(track.fixes[0].coordinate, 5)
            mark(track.fixes[track.fixes.count - 1].coordinate, 5)
        }
        var lines: [Box] = []
        for track in scene.tracks where scene.fixCount <= 20_000 {
            var last: (x: Double, y: Double)?
            for fix in track.fixes {
                let p = projection.point(latitude: fix.coordinate.latitude, longitude: fix.coordinate.longitude)
                let from = last ?? p
                let steps = max(1, Int((abs(p.x - from.x) + abs(p.y - from.y)) / 8))
                for step in 1...steps {
                    let t = Double(step) / Double(steps)
                    let (x, y) = (from.x + t * (p.x - from.x), from.y + t * (p.y - from.y))
                    lines.append((x - 1.5, y - 1.5, x + 1.5, y + 1.5))
                }
                last = p
            }
        }
        return (markers, lines)
    }

    private static func overlap(_ a: Box, _ b: Box) -> Bool {
        a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
    }

    /// A point well inside the largest part: the middle of the longest run of a horizontal line
    /// through the part's box centre that lies inside (so a donut's label sits on the ring, and a
    /// C shape's in the C, not in the gap), with half that run's length and half the part's height.
    static func polygonAnchor(_ parts: [[[Coordinate]]], projection: MapProjection) -> (
        x: Double, y: Double, halfWidth: Double, halfHeight: Double
    )? {
        let projected = parts.map { rings in
            rings.map { ring in ring.map { projection.point(latitude: $0.latitude, longitude: $0.longitude) } }
        }
        func area(_ ring: [(x: Double, y: Double)]) -> Double {
            guard ring.count > 2 else { return 0 }
            var sum = 0.0
            for index in ring.indices {
                let a = ring[index]
                let b = ring[(index + 1) % ring.count]
                sum += a.x * b.y - b.x * a.y
            }
            return abs(sum) / 2
        }
        guard let largest = projected.max(by: { area($0.first ?? []) < area($1.first ?? []) }),
            let exterior = largest.first, !exterior.isEmpty
        else { return nil }
        let ys = exterior.map(\.y)
        let xs = exterior.map(\.x)
        let (top, bottom) = (ys.min()!, ys.max()!)
        let y = (top + bottom) / 2
        var crossings: [Double] = []
        for ring in largest {
            for index in ring.indices {
                let a = ring[index]
                let b = ring[(index + 1) % ring.count]
                if (a.y <= y) != (b.y <= y) { crossings.append(a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x)) }
            }
        }
        crossings.sort()
        var best = ((xs.min()! + xs.max()!) / 2, 0.0)
        for pair in stride(from: 0, to: crossings.count - 1, by: 2) {
            let length = crossings[pair + 1] - crossings[pair]
            if length > best.1 { best = ((crossings[pair] + crossings[pair + 1]) / 2, length) }
        }
        return (best.0, y, best.1 / 2, (bottom - top) / 2)
    }

    /// The point `fraction` of the way along `path` (by pixel length).
    static func point(along path: [Coordinate], at fraction: Double, projection: MapProjection) -> (
        x: Double, y: Double
    )? {
        let points = path.map { projection.point(latitude: $0.latitude, longitude: $0.longitude) }
        guard let first = points.first else { return nil }
        var lengths: [Double] = []
        for index in points.indices.dropFirst() {
            let (dx, dy) = (points[index].x - points[index - 1].x, points[index].y - points[index - 1].y)
            lengths.append((dx * dx + dy * dy).squareRoot())
        }
        var remaining = lengths.reduce(0, +) * fraction
        for (index, length) in lengths.enumerated() {
            if remaining <= length && length > 0 {
                let t = remaining / length
                let (a, b) = (points[index], points[index + 1])
                return (a.x + t * (b.x - a.x), a.y + t * (b.y - a.y))
            }
            remaining -= length
        }
        return first
    }
}
