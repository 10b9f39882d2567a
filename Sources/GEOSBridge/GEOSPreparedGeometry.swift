internal import CGEOS

/// A prepared geometry: GEOS's indexed form for fast repeated predicates against one geometry.
public final class GEOSPreparedGeometry {
    /// The geometry this was prepared from; kept alive because the prepared form points into it.
    public let geometry: GEOSGeometry
    let handle: OpaquePointer

    init(geometry: GEOSGeometry) throws(GEOSError) {
        geometry.context.resetError()
        // GEOSPrepare_r returns a prepared geometry to free with GEOSPreparedGeom_destroy_r, or NULL.
        guard let handle = GEOSPrepare_r(geometry.context.handle, geometry.handle) else {
            throw geometry.context.error("GEOSPrepare")
        }
        self.geometry = geometry
        self.handle = handle
    }

    deinit {
        // Frees only the prepared index, not the geometry it was made from.
        GEOSPreparedGeom_destroy_r(geometry.context.handle, handle)
    }

    /// Whether the point lies in the geometry or on its boundary.
    public func covers(x: Double, y: Double) throws(GEOSError) -> Bool {
        let context = geometry.context
        let point = try context.makePoint(x: x, y: y)
        context.resetError()
        // GEOSPreparedCovers_r returns 1 true, 0 false, 2 on exception.
        let result = GEOSPreparedCovers_r(context.handle, handle, point.handle)
        if result == 2 { throw context.error("GEOSPreparedCovers") }
        return result == 1
    }

    /// Whether the point lies in the interior of the geometry (boundary excluded).
    public func contains(x: Double, y: Double) throws(GEOSError) -> Bool {
        let context = geometry.context
        let point = try context.makePoint(x: x, y: y)
        context.resetError()
        // GEOSPreparedContains_r returns 1 true, 0 false, 2 on exception.
        let result = GEOSPreparedContains_r(context.handle, handle, point.handle)
        if result == 2 { throw context.error("GEOSPreparedContains") }
        return result == 1
    }

    /// Whether `other` shares at least one point with the geometry.
    public func intersects(_ other: GEOSGeometry) throws(GEOSError) -> Bool {
        let context = geometry.context
        context.resetError()
        // GEOSPreparedIntersects_r returns 1 true, 0 false, 2 on exception.
        let result = GEOSPreparedIntersects_r(context.handle, handle, other.handle)
        if result == 2 { throw context.error("GEOSPreparedIntersects") }
        return result == 1
    }
}

@available(*, unavailable)
extension GEOSPreparedGeometry: Sendable {}
