import Fenceline
import Foundation
import GEOSBridge

/// The same evaluation done with GEOS alone, through the bridge: an STRtree over fence envelopes
/// and, for every candidate, a prepared `covers` (polygons) or a GEOS distance (circles, in the
/// circle's local frame), with naive enter/exit per (device, fence). Stateless geometry, the
/// simplest state: what a GEOS-only service would do.
final class GEOSBaseline {
    enum Fence {
        case polygon(GEOSPreparedGeometry)
        case circle(latitude: Double, longitude: Double, radius: Double, metresPerDegreeEast: Double)
    }

    struct Transition: Hashable {
        var time: Int64
        var fence: Int
        var device: String
        var enter: Bool
    }

    let context = GEOSContext()
    let tree: GEOSSTRtree
    var fences: [Fence] = []
    var ids: [String] = []
    private var inside: [String: Set<Int>] = [:]
    private var candidates: [Int] = []
    private let origin: GEOSGeometry
    /// Transitions, when recording (for the correctness guard).
    var transitions: [Transition] = []
    var recording = false
    var count = 0

    init(catalog: Catalog) throws {
        tree = try GEOSSTRtree(context: context)
        origin = try context.makePoint(x: 0, y: 0)
        let k = 6_371_008.8 * Double.pi / 180
        for request in catalog.requests {
            guard case .region(let trigger) = request.trigger else { continue }
            let index = fences.count
            switch trigger.geometry {
            case .circle(let center, let radius):
                let east = k * cos(center.latitude * .pi / 180)
                fences.append(
                    .circle(
                        latitude: center.latitude, longitude: center.longitude, radius: radius,
                        metresPerDegreeEast: east))
                tree.insert(
                    try context.makeRectangle(
                        minX: center.longitude - radius / east, minY: center.latitude - radius / k,
                        maxX: center.longitude + radius / east, maxY: center.latitude + radius / k), item: index)
            case .polygons(let polygons):
                let geometry = try context.makeMultiPolygon(
                    polygons: polygons.map { $0.map { $0.map { PlanarPoint(x: $0.longitude, y: $0.latitude) } } })
                fences.append(.polygon(try geometry.makePrepared()))
                let points = polygons.joined().joined()
                tree.insert(
                    try context.makeRectangle(
                        minX: points.map(\.longitude).min()!, minY: points.map(\.latitude).min()!,
                        maxX: points.map(\.longitude).max()!, maxY: points.map(\.latitude).max()!), item: index)
            case .corridor:
                continue
            }
            ids.append(request.id)
        }
    }

    /// Evaluates one fix: candidates from the tree, GEOS for each, enter/exit by set difference.
    func process(_ fix: Fix) throws {
        let point = try context.makePoint(x: fix.coordinate.longitude, y: fix.coordinate.latitude)
        candidates.removeAll(keepingCapacity: true)
        tree.query(point, into: &candidates)
        var now = Set<Int>()
        for index in candidates {
            switch fences[index] {
            case .polygon(let prepared):
                if try prepared.covers(point) { now.insert(index) }
            case .circle(let latitude, let longitude, let radius, let east):
                let local = try context.makePoint(
                    x: (fix.coordinate.longitude - longitude) * east,
                    y: (fix.coordinate.latitude - latitude) * 6_371_008.8 * Double.pi / 180)
                if try local.distance(to: origin) <= radius { now.insert(index) }
            }
        }
        guard let before = inside[fix.device] else {
            inside[fix.device] = now  // the first fix sets the state silently
            return
        }
        if before == now { return }
        for fence in now.subtracting(before) { record(fix, fence, enter: true) }
        for fence in before.subtracting(now) { record(fix, fence, enter: false) }
        inside[fix.device] = now
    }

    private func record(_ fix: Fix, _ fence: Int, enter: Bool) {
        count += 1
        if recording {
            transitions.append(Transition(time: fix.time.microseconds, fence: fence, device: fix.device, enter: enter))
        }
    }
}
