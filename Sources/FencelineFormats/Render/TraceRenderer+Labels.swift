import Fenceline

extension TraceRenderer {
    typealias Box = (x0: Double, y0: Double, x1: Double, y1: Double)

    /// Writes fence ids where they read best: inside a fence with room for them, else just above it,
    /// below it, or beside it. The first spot clear of other labels, markers and track lines wins;
    /// failing that, the first clear of labels and markers; then the first clear of labels; else the
    /// label is left out (its fence keeps the id in its tooltip). None above the label limit.
    func drawLabels(
        _ anchors: [LabelAnchor], scene: TraceScene, layout: Layout, projection: MapProjection,
        into out: inout String
    ) {
        guard anchors.count <= options.maximumFenceLabels else { return }
        let n = SVGText.number
        let fontSize = 11.0
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
        // Track lines as small boxes every 8 px, unless there are so many that nothing would be clear.
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
        var placed: [Box] = []
        for anchor in anchors {
            let text = SVGText.truncated(anchor.text, to: 32)
            let halfWidth = Double(text.count) * fontSize * 0.31 + 2
            let (x, y) = (anchor.x, anchor.y)
            var spots = [
                (x, y - anchor.halfHeight - 5), (x, y + anchor.halfHeight + fontSize + 3),
                (x + anchor.halfWidth + halfWidth + 5, y + 4), (x - anchor.halfWidth - halfWidth - 5, y + 4),
            ]
            if anchor.halfHeight >= 24 && anchor.halfWidth >= halfWidth + 6 {
                spots.insert(
                    contentsOf: [(x, y + 4), (x, y + 4 - anchor.halfHeight / 2), (x, y + 4 + anchor.halfHeight / 2)],
                    at: 0)
            }
            let boxes = spots.map { spot -> Box in
                (spot.0 - halfWidth - 1.5, spot.1 - fontSize - 0.5, spot.0 + halfWidth + 1.5, spot.1 + 3.5)
            }
            func onMap(_ box: Box) -> Bool {
                box.x0 >= layout.mapX && box.x1 <= layout.mapX + layout.mapWidth && box.y0 >= layout.mapY
                    && box.y1 <= layout.mapY + layout.mapHeight
            }
            func clear(_ box: Box, of others: [Box]) -> Bool { !others.contains { Self.overlap($0, box) } }
            let candidates = boxes.indices.filter { onMap(boxes[$0]) && clear(boxes[$0], of: placed) }
            let choice =
                candidates.first { clear(boxes[$0], of: markers) && clear(boxes[$0], of: lines) }
                ?? candidates.first { clear(boxes[$0], of: markers) } ?? candidates.first
            guard let choice else { continue }
            placed.append(boxes[choice])
            out += "<text class=\"fl-label\" x=\"\(n(spots[choice].0))\" y=\"\(n(spots[choice].1))\">"
            out += "\(SVGText.escaped(text))</text>\n"
        }
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

    /// The point halfway along `path` (by pixel length).
    static func middle(of path: [Coordinate], projection: MapProjection) -> (x: Double, y: Double)? {
        let points = path.map { projection.point(latitude: $0.latitude, longitude: $0.longitude) }
        guard let first = points.first else { return nil }
        var lengths: [Double] = []
        for index in points.indices.dropFirst() {
            let (dx, dy) = (points[index].x - points[index - 1].x, points[index].y - points[index - 1].y)
            lengths.append((dx * dx + dy * dy).squareRoot())
        }
        var remaining = lengths.reduce(0, +) / 2
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
