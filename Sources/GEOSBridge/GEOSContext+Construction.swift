internal import CGEOS

extension GEOSContext {
    /// A point geometry.
    public func makePoint(x: Double, y: Double) throws(GEOSError) -> GEOSGeometry {
        resetError()
        // GEOSGeom_createPointFromXY_r returns a new point owned by the caller, or NULL on exception.
        guard let handle = GEOSGeom_createPointFromXY_r(self.handle, x, y) else { throw error("GEOSGeom_createPoint") }
        return GEOSGeometry(context: self, handle: handle)
    }

    /// A line string through `points` (at least two).
    public func makeLineString(_ points: [PlanarPoint]) throws(GEOSError) -> GEOSGeometry {
        let sequence = try makeSequence(points)
        resetError()
        // GEOSGeom_createLineString_r takes ownership of the sequence; NULL on exception.
        guard let handle = GEOSGeom_createLineString_r(self.handle, sequence) else {
            throw error("GEOSGeom_createLineString")
        }
        return GEOSGeometry(context: self, handle: handle)
    }

    /// A polygon from its rings, the exterior first; each ring is closed by the caller.
    ///
    /// GEOS refuses rings that are not closed or have fewer than four positions; that refusal
    /// is thrown with GEOS's message (for example `"Points of LinearRing do not form a closed linestring"`).
    public func makePolygon(rings: [[PlanarPoint]]) throws(GEOSError) -> GEOSGeometry {
        guard let handle = try makePolygonHandle(rings: rings) else {
            // A polygon with no rings is the empty polygon.
            resetError()
            // GEOSGeom_createEmptyPolygon_r returns a new empty polygon, or NULL on exception.
            guard let empty = GEOSGeom_createEmptyPolygon_r(self.handle) else {
                throw error("GEOSGeom_createEmptyPolygon")
            }
            return GEOSGeometry(context: self, handle: empty)
        }
        return GEOSGeometry(context: self, handle: handle)
    }

    /// A multipolygon from its polygons, each given as rings with the exterior first.
    public func makeMultiPolygon(polygons: [[[PlanarPoint]]]) throws(GEOSError) -> GEOSGeometry {
        var parts: [OpaquePointer?] = []
        parts.reserveCapacity(polygons.count)
        do {
            for rings in polygons {
                guard let part = try makePolygonHandle(rings: rings) else { continue }
                parts.append(part)
            }
        } catch {
            for part in parts { GEOSGeom_destroy_r(self.handle, part) }
            throw error
        }
        resetError()
        // GEOSGeom_createCollection_r takes ownership of the parts (not of the array); NULL on exception.
        let handle = parts.withUnsafeMutableBufferPointer { buffer in
            GEOSGeom_createCollection_r(
                self.handle, Int32(GEOS_MULTIPOLYGON.rawValue), buffer.baseAddress, UInt32(buffer.count))
        }
        guard let handle else {
            for part in parts { GEOSGeom_destroy_r(self.handle, part) }
            throw error("GEOSGeom_createCollection")
        }
        return GEOSGeometry(context: self, handle: handle)
    }

    /// A geometry read from well-known text, for tests and tools.
    public func makeGeometry(wkt: String) throws(GEOSError) -> GEOSGeometry {
        resetError()
        // GEOSWKTReader_create_r returns a reader to destroy with GEOSWKTReader_destroy_r, or NULL.
        guard let reader = GEOSWKTReader_create_r(handle) else { throw error("GEOSWKTReader_create") }
        defer { GEOSWKTReader_destroy_r(handle, reader) }
        // GEOSWKTReader_read_r returns a new geometry owned by the caller, or NULL on a parse error.
        guard let geometry = GEOSWKTReader_read_r(handle, reader, wkt) else { throw error("GEOSWKTReader_read") }
        return GEOSGeometry(context: self, handle: geometry)
    }

    private func makePolygonHandle(rings: [[PlanarPoint]]) throws(GEOSError) -> OpaquePointer? {
        guard let first = rings.first else { return nil }
        let shell = try makeRingHandle(first)
        var holes: [OpaquePointer?] = []
        do {
            for ring in rings.dropFirst() { holes.append(try makeRingHandle(ring)) }
        } catch {
            GEOSGeom_destroy_r(handle, shell)
            for hole in holes { GEOSGeom_destroy_r(handle, hole) }
            throw error
        }
        resetError()
        // GEOSGeom_createPolygon_r takes ownership of the shell and holes; NULL on exception.
        let polygon = holes.withUnsafeMutableBufferPointer { buffer in
            GEOSGeom_createPolygon_r(handle, shell, buffer.baseAddress, UInt32(buffer.count))
        }
        guard let polygon else {
            GEOSGeom_destroy_r(handle, shell)
            for hole in holes { GEOSGeom_destroy_r(handle, hole) }
            throw error("GEOSGeom_createPolygon")
        }
        return polygon
    }

    private func makeRingHandle(_ points: [PlanarPoint]) throws(GEOSError) -> OpaquePointer {
        let sequence = try makeSequence(points)
        resetError()
        // GEOSGeom_createLinearRing_r takes ownership of the sequence; NULL when the ring is not closed.
        guard let ring = GEOSGeom_createLinearRing_r(handle, sequence) else { throw error("GEOSGeom_createLinearRing") }
        return ring
    }

    private func makeSequence(_ points: [PlanarPoint]) throws(GEOSError) -> OpaquePointer {
        var flat: [Double] = []
        flat.reserveCapacity(points.count * 2)
        for point in points {
            flat.append(point.x)
            flat.append(point.y)
        }
        resetError()
        // GEOSCoordSeq_copyFromBuffer_r copies interleaved x,y pairs into a new sequence; NULL on exception.
        let sequence = flat.withUnsafeBufferPointer { buffer in
            GEOSCoordSeq_copyFromBuffer_r(handle, buffer.baseAddress, UInt32(points.count), 0, 0)
        }
        guard let sequence else { throw error("GEOSCoordSeq_copyFromBuffer") }
        return sequence
    }
}
