internal import CGEOS

/// GEOS's STR-packed R-tree over envelopes, holding integer items (the benchmark baseline's index).
///
/// Insert everything, then query: GEOS builds the tree on the first query and refuses inserts after.
public final class GEOSSTRtree {
    let context: GEOSContext
    let handle: OpaquePointer
    /// The geometries whose envelopes were inserted; GEOS keeps pointers to them.
    private var envelopes: [GEOSGeometry] = []

    /// Creates an empty tree with `nodeCapacity` children per node.
    public init(context: GEOSContext, nodeCapacity: Int = 10) throws(GEOSError) {
        context.resetError()
        // GEOSSTRtree_create_r returns a tree to destroy with GEOSSTRtree_destroy_r, or NULL.
        guard let handle = GEOSSTRtree_create_r(context.handle, nodeCapacity) else {
            throw context.error("GEOSSTRtree_create")
        }
        self.context = context
        self.handle = handle
    }

    deinit {
        // Frees the tree's nodes, not the inserted geometries (owned by `envelopes`).
        GEOSSTRtree_destroy_r(context.handle, handle)
    }

    /// Adds `item` under the envelope of `geometry`.
    public func insert(_ geometry: GEOSGeometry, item: Int) {
        envelopes.append(geometry)
        // The item travels as a pointer-sized integer (never dereferenced); +1 keeps it non-null.
        GEOSSTRtree_insert_r(context.handle, handle, geometry.handle, UnsafeMutableRawPointer(bitPattern: item + 1))
    }

    /// The items whose envelopes intersect the envelope of `geometry`, appended to `result`.
    public func query(_ geometry: GEOSGeometry, into result: inout [Int]) {
        withUnsafeMutablePointer(to: &result) { pointer in
            // GEOSSTRtree_query_r calls the callback once per candidate item.
            GEOSSTRtree_query_r(
                context.handle, handle, geometry.handle,
                { item, userdata in
                    guard let item, let userdata else { return }
                    userdata.assumingMemoryBound(to: [Int].self).pointee.append(Int(bitPattern: item) - 1)
                }, pointer)
        }
    }
}

@available(*, unavailable)
extension GEOSSTRtree: Sendable {}

extension GEOSPreparedGeometry {
    /// Whether the prepared geometry covers `point` (a point geometry made by the caller and reused).
    public func covers(_ point: GEOSGeometry) throws(GEOSError) -> Bool {
        let context = geometry.context
        context.resetError()
        // GEOSPreparedCovers_r returns 1 true, 0 false, 2 on exception.
        let result = GEOSPreparedCovers_r(context.handle, handle, point.handle)
        if result == 2 { throw context.error("GEOSPreparedCovers") }
        return result == 1
    }
}

extension GEOSContext {
    /// The rectangle from (minX, minY) to (maxX, maxY), for index envelopes.
    public func makeRectangle(minX: Double, minY: Double, maxX: Double, maxY: Double) throws(GEOSError) -> GEOSGeometry
    {
        resetError()
        // GEOSGeom_createRectangle_r returns a new polygon owned by the caller, or NULL on exception.
        guard let handle = GEOSGeom_createRectangle_r(self.handle, minX, minY, maxX, maxY) else {
            throw error("GEOSGeom_createRectangle")
        }
        return GEOSGeometry(context: self, handle: handle)
    }
}
