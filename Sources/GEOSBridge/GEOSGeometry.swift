internal import CGEOS

/// A GEOS geometry owned by Swift: the handle is destroyed when the last reference goes.
///
/// Made by the constructors on ``GEOSContext``; every operation runs in that context.
public final class GEOSGeometry {
    /// The context the geometry was made in; every operation on it runs there.
    public let context: GEOSContext
    let handle: OpaquePointer

    init(context: GEOSContext, handle: OpaquePointer) {
        self.context = context
        self.handle = handle
    }

    deinit {
        // GEOSGeom_destroy_r frees the geometry and everything it owns (rings, coordinates).
        GEOSGeom_destroy_r(context.handle, handle)
    }

    /// The OGC type of the geometry.
    public var kind: Kind {
        // GEOSGeomTypeId_r returns the GEOSGeomTypes value, or -1 on error.
        switch GEOSGeomTypeId_r(context.handle, handle) {
        case Int32(GEOS_POINT.rawValue): .point
        case Int32(GEOS_LINESTRING.rawValue): .lineString
        case Int32(GEOS_LINEARRING.rawValue): .linearRing
        case Int32(GEOS_POLYGON.rawValue): .polygon
        case Int32(GEOS_MULTIPOINT.rawValue): .multiPoint
        case Int32(GEOS_MULTILINESTRING.rawValue): .multiLineString
        case Int32(GEOS_MULTIPOLYGON.rawValue): .multiPolygon
        default: .geometryCollection
        }
    }

    /// The OGC geometry types this bridge distinguishes.
    public enum Kind: Sendable, Hashable {
        case point, lineString, linearRing, polygon, multiPoint, multiLineString, multiPolygon, geometryCollection
    }

    /// `nil` when the geometry is valid in the OGC sense, else GEOS's reason, such as
    /// `"Self-intersection[4.89 52.375]"`.
    public func invalidityReason() throws(GEOSError) -> String? {
        context.resetError()
        // GEOSisValid_r returns 1 valid, 0 invalid, 2 on exception.
        let valid = GEOSisValid_r(context.handle, handle)
        if valid == 1 { return nil }
        if valid == 2 { throw context.error("GEOSisValid") }
        // GEOSisValidReason_r returns a string to free with GEOSFree_r, or NULL on exception.
        guard let reason = GEOSisValidReason_r(context.handle, handle) else { throw context.error("GEOSisValidReason") }
        defer { GEOSFree_r(context.handle, reason) }
        return String(cString: reason)
    }

    /// The area in the units of the coordinates squared.
    public func area() throws(GEOSError) -> Double {
        var area = 0.0
        context.resetError()
        // GEOSArea_r returns 1 on success, 0 on exception.
        guard GEOSArea_r(context.handle, handle, &area) == 1 else { throw context.error("GEOSArea") }
        return area
    }

    /// The shortest planar distance between the two geometries (0 when they intersect).
    public func distance(to other: GEOSGeometry) throws(GEOSError) -> Double {
        var distance = 0.0
        context.resetError()
        // GEOSDistance_r returns 1 on success, 0 on exception.
        guard GEOSDistance_r(context.handle, handle, other.handle, &distance) == 1 else {
            throw context.error("GEOSDistance")
        }
        return distance
    }

    /// The point-set intersection of the two geometries.
    public func intersection(_ other: GEOSGeometry) throws(GEOSError) -> GEOSGeometry {
        context.resetError()
        // GEOSIntersection_r returns a new geometry owned by the caller, or NULL on exception.
        guard let result = GEOSIntersection_r(context.handle, handle, other.handle) else {
            throw context.error("GEOSIntersection")
        }
        return GEOSGeometry(context: context, handle: result)
    }

    /// The union of all parts of this geometry (dissolving shared edges between touching polygons).
    public func unaryUnion() throws(GEOSError) -> GEOSGeometry {
        context.resetError()
        // GEOSUnaryUnion_r returns a new geometry owned by the caller, or NULL on exception.
        guard let result = GEOSUnaryUnion_r(context.handle, handle) else { throw context.error("GEOSUnaryUnion") }
        return GEOSGeometry(context: context, handle: result)
    }

    /// The buffer of the geometry by `width`, approximating quarter circles with `quadrantSegments` segments.
    public func buffer(width: Double, quadrantSegments: Int32 = 16) throws(GEOSError) -> GEOSGeometry {
        context.resetError()
        // GEOSBuffer_r returns a new geometry owned by the caller, or NULL on exception.
        guard let result = GEOSBuffer_r(context.handle, handle, width, quadrantSegments) else {
            throw context.error("GEOSBuffer")
        }
        return GEOSGeometry(context: context, handle: result)
    }

    /// Whether this geometry covers `other` (every point of `other` lies in this one, boundary included).
    public func covers(_ other: GEOSGeometry) throws(GEOSError) -> Bool {
        context.resetError()
        // GEOSCovers_r returns 1 true, 0 false, 2 on exception.
        let result = GEOSCovers_r(context.handle, handle, other.handle)
        if result == 2 { throw context.error("GEOSCovers") }
        return result == 1
    }

    /// Whether the two geometries share at least one point.
    public func intersects(_ other: GEOSGeometry) throws(GEOSError) -> Bool {
        context.resetError()
        // GEOSIntersects_r returns 1 true, 0 false, 2 on exception.
        let result = GEOSIntersects_r(context.handle, handle, other.handle)
        if result == 2 { throw context.error("GEOSIntersects") }
        return result == 1
    }

    /// A prepared form of this geometry for many repeated predicate tests.
    public func makePrepared() throws(GEOSError) -> GEOSPreparedGeometry {
        try GEOSPreparedGeometry(geometry: self)
    }

    /// The well-known text of the geometry, for messages and tests.
    public func wkt() throws(GEOSError) -> String {
        context.resetError()
        // GEOSWKTWriter_create_r returns a writer to destroy with GEOSWKTWriter_destroy_r, or NULL.
        guard let writer = GEOSWKTWriter_create_r(context.handle) else { throw context.error("GEOSWKTWriter_create") }
        defer { GEOSWKTWriter_destroy_r(context.handle, writer) }
        GEOSWKTWriter_setTrim_r(context.handle, writer, 1)
        // GEOSWKTWriter_write_r returns a string to free with GEOSFree_r, or NULL on exception.
        guard let text = GEOSWKTWriter_write_r(context.handle, writer, handle) else {
            throw context.error("GEOSWKTWriter_write")
        }
        defer { GEOSFree_r(context.handle, text) }
        return String(cString: text)
    }
}

@available(*, unavailable)
extension GEOSGeometry: Sendable {}
