internal import CGEOS

extension GEOSGeometry {
    /// The polygons of a polygon or multipolygon (or of a collection holding them), each as its
    /// rings with the exterior first. Other parts are left out.
    public func polygonRings() throws(GEOSError) -> [[[PlanarPoint]]] {
        switch kind {
        case .polygon:
            return [try rings(ofPolygon: handle)]
        case .multiPolygon, .geometryCollection:
            var result: [[[PlanarPoint]]] = []
            for part in try parts() {
                // GEOSGeomTypeId_r returns the type of the part.
                if GEOSGeomTypeId_r(context.handle, part) == Int32(GEOS_POLYGON.rawValue) {
                    result.append(try rings(ofPolygon: part))
                }
            }
            return result
        default:
            return []
        }
    }

    /// The coordinates of a point, line string or linear ring.
    public func points() throws(GEOSError) -> [PlanarPoint] {
        try points(of: handle)
    }

    private func parts() throws(GEOSError) -> [OpaquePointer] {
        // GEOSGetNumGeometries_r returns the number of parts, or -1 on exception.
        let count = GEOSGetNumGeometries_r(context.handle, handle)
        guard count >= 0 else { throw context.error("GEOSGetNumGeometries") }
        var parts: [OpaquePointer] = []
        for index in 0..<count {
            // GEOSGetGeometryN_r returns a part still owned by the collection, or NULL on exception.
            guard let part = GEOSGetGeometryN_r(context.handle, handle, index) else {
                throw context.error("GEOSGetGeometryN")
            }
            parts.append(part)
        }
        return parts
    }

    private func rings(ofPolygon polygon: OpaquePointer) throws(GEOSError) -> [[PlanarPoint]] {
        // GEOSGetExteriorRing_r returns the shell, still owned by the polygon, or NULL on exception.
        guard let shell = GEOSGetExteriorRing_r(context.handle, polygon) else {
            throw context.error("GEOSGetExteriorRing")
        }
        var rings = [try points(of: shell)]
        // GEOSGetNumInteriorRings_r returns the number of holes, or -1 on exception.
        let holes = GEOSGetNumInteriorRings_r(context.handle, polygon)
        guard holes >= 0 else { throw context.error("GEOSGetNumInteriorRings") }
        for index in 0..<holes {
            // GEOSGetInteriorRingN_r returns a hole still owned by the polygon, or NULL on exception.
            guard let hole = GEOSGetInteriorRingN_r(context.handle, polygon, index) else {
                throw context.error("GEOSGetInteriorRingN")
            }
            rings.append(try points(of: hole))
        }
        return rings
    }

    private func points(of geometry: OpaquePointer) throws(GEOSError) -> [PlanarPoint] {
        // GEOSGeom_getCoordSeq_r returns the sequence still owned by the geometry, or NULL on exception.
        guard let sequence = GEOSGeom_getCoordSeq_r(context.handle, geometry) else {
            throw context.error("GEOSGeom_getCoordSeq")
        }
        var size: UInt32 = 0
        // GEOSCoordSeq_getSize_r returns 0 on exception.
        guard GEOSCoordSeq_getSize_r(context.handle, sequence, &size) != 0 else {
            throw context.error("GEOSCoordSeq_getSize")
        }
        var flat = [Double](repeating: 0, count: Int(size) * 2)
        // GEOSCoordSeq_copyToBuffer_r copies interleaved x,y pairs; it returns 0 on exception.
        let copied = flat.withUnsafeMutableBufferPointer { buffer in
            GEOSCoordSeq_copyToBuffer_r(context.handle, sequence, buffer.baseAddress, 0, 0)
        }
        guard copied != 0 else { throw context.error("GEOSCoordSeq_copyToBuffer") }
        return (0..<Int(size)).map { PlanarPoint(x: flat[2 * $0], y: flat[2 * $0 + 1]) }
    }
}
