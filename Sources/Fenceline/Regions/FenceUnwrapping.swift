/// Longitude unwrapping for fences that cross ±180° (SPEC §5).
enum FenceUnwrapping {
    /// Each ring made contiguous (every step under half a turn) from its polygon's first position,
    /// and, when `sharingOneRange`, each polygon shifted by whole turns to lie within half a turn of
    /// the first polygon, so all parts share one longitude range. Validation unwraps without the
    /// shift: parts of a MultiPolygon split along ±180° touch along the seam once shifted together.
    static func unwrappedParts(_ polygons: [[[Coordinate]]], sharingOneRange: Bool = true) -> [[[Coordinate]]] {
        guard let reference = polygons.first?.first?.first?.longitude else { return polygons }
        if isContiguous(polygons, reference: reference) { return polygons }  // the common case, no copy
        return polygons.map { rings in
            guard let anchor = rings.first?.first?.longitude else { return rings }
            let shifted = sharingOneRange ? unwrap(anchor, near: reference) - anchor : 0
            return rings.map { ring in
                var previous = anchor
                return ring.map { point in
                    let longitude = unwrap(point.longitude, near: previous)
                    previous = longitude
                    return Coordinate(latitude: point.latitude, longitude: longitude + shifted)
                }
            }
        }
    }

    /// Whether unwrapping would leave every longitude as it is.
    private static func isContiguous(_ polygons: [[[Coordinate]]], reference: Double) -> Bool {
        for rings in polygons {
            guard let anchor = rings.first?.first?.longitude else { continue }
            if unwrap(anchor, near: reference) != anchor { return false }
            for ring in rings {
                var previous = anchor
                for point in ring {
                    if unwrap(point.longitude, near: previous) != point.longitude { return false }
                    previous = point.longitude
                }
            }
        }
        return true
    }

    /// The path made contiguous from its first position.
    static func unwrappedPath(_ path: [Coordinate]) -> [Coordinate] {
        guard var previous = path.first?.longitude else { return path }
        return path.map { point in
            let longitude = unwrap(point.longitude, near: previous)
            previous = longitude
            return Coordinate(latitude: point.latitude, longitude: longitude)
        }
    }
}
