import Fenceline
import FencelineFormats
import Foundation

extension TraceScene {
    /// Pins each event (in the given order, which is the drawing order) to its reported position, else to its device's fix nearest in time (the
    /// earlier one on a tie); events with neither are kept aside for the legend and the table.
    mutating func placeEvents(_ events: [Event], wrap: (Double) -> Double) {
        let tracksByDevice = Dictionary(uniqueKeysWithValues: tracks.map { ($0.device, $0.fixes) })
        for event in events {
            if let position = event.position, position.coordinate.latitude.isFinite {
                var coordinate = position.coordinate
                coordinate.longitude = wrap(coordinate.longitude)
                marks.append(Mark(event: event, coordinate: coordinate, isEstimated: false))
            } else if let device = event.device, let fixes = tracksByDevice[device], !fixes.isEmpty {
                let nearest = Self.nearest(in: fixes, to: event.time)
                marks.append(Mark(event: event, coordinate: nearest.coordinate, isEstimated: true))
            } else {
                unplacedEvents.append(event)
            }
        }
    }

    /// The fix of time-ordered `fixes` closest to `time`.
    static func nearest(in fixes: [Fix], to time: Timestamp) -> Fix {
        var low = 0
        var high = fixes.count
        while low < high {
            let middle = (low + high) / 2
            if fixes[middle].time < time { low = middle + 1 } else { high = middle }
        }
        guard low < fixes.count else { return fixes[fixes.count - 1] }
        guard low > 0 else { return fixes[0] }
        let before = fixes[low - 1]
        let after = fixes[low]
        return time.span(since: before.time) <= after.time.span(since: time) ? before : after
    }

    /// The box around everything drawn, at least 200 m on each side so a lone fix still gets a map.
    func measure() -> GeoBounds? {
        var box = (south: Double.infinity, north: -Double.infinity, west: Double.infinity, east: -Double.infinity)
        func include(_ latitude: Double, _ longitude: Double, metres: Double = 0) {
            let dLat = metres / Earth.metresPerDegree
            let dLon = dLat / max(0.01, cos(min(89.9, abs(latitude)) * .pi / 180))
            box.south = min(box.south, max(-90, latitude - dLat))
            box.north = max(box.north, min(90, latitude + dLat))
            box.west = min(box.west, longitude - dLon)
            box.east = max(box.east, longitude + dLon)
        }
        for track in tracks { for fix in track.fixes { include(fix.coordinate.latitude, fix.coordinate.longitude) } }
        for mark in marks { include(mark.coordinate.latitude, mark.coordinate.longitude) }
        for fence in fences {
            switch fence.geometry {
            case .circle(let center, let radius): include(center.latitude, center.longitude, metres: radius)
            case .polygons(let parts):
                for part in parts { for point in part.first ?? [] { include(point.latitude, point.longitude) } }
            case .corridor(let path, let width):
                for point in path { include(point.latitude, point.longitude, metres: width) }
            }
        }
        guard box.south <= box.north, box.west <= box.east else { return nil }
        let minimum = 200 / Earth.metresPerDegree
        let middle = (box.south + box.north) / 2
        if box.north - box.south < minimum {
            (box.south, box.north) = (middle - minimum / 2, middle + minimum / 2)
        }
        let minimumEast = minimum / max(0.01, cos(min(89.9, abs(middle)) * .pi / 180))
        if box.east - box.west < minimumEast {
            let center = (box.west + box.east) / 2
            (box.west, box.east) = (center - minimumEast / 2, center + minimumEast / 2)
        }
        return GeoBounds(south: box.south, north: box.north, west: box.west, east: box.east)
    }

    /// How many events of each kind, in `EventKind.allCases` order, drawn or not.
    var eventCounts: [Int] {
        var counts = Array(repeating: 0, count: EventKind.allCases.count)
        for event in marks.map(\.event) + unplacedEvents {
            counts[EventKind.allCases.firstIndex(of: event.kind)!] += 1
        }
        return counts
    }
}
