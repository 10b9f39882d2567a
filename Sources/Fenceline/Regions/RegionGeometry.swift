/// The shape of a region trigger's fence.
public enum RegionGeometry: Hashable, Sendable {
    /// A great-circle disc: every point within `radius` metres of `center`.
    case circle(center: Coordinate, radius: Double)
    /// One or more polygons (a GeoJSON `Polygon` is one, a `MultiPolygon` several), each given as
    /// its rings with the exterior first; positions are `[lon, lat]` as in GeoJSON, edges straight
    /// in lon/lat (RFC 7946), boundary inside.
    case polygons([[[Coordinate]]])
    /// A route corridor: every point within `width` metres of the line through `path`.
    case corridor(path: [Coordinate], width: Double)
}

/// One thing wrong with a fence, with the JSON path of the offending value below the geometry.
public struct GeometryProblem: Hashable, Sendable {
    /// The path below the geometry's own key, such as `coordinates[0]`; empty for the whole shape.
    public var path: String
    /// What is wrong and how to fix it.
    public var message: String

    /// Creates a problem at `path` with `message`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}
