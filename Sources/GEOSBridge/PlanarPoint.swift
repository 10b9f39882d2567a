/// A point in the plane of a GEOS geometry: `x` is longitude (or metres east), `y` latitude (or metres north).
public struct PlanarPoint: Hashable, Sendable {
    /// The first ordinate.
    public var x: Double
    /// The second ordinate.
    public var y: Double

    /// Creates a point from its two ordinates.
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}
