import Foundation

/// An equirectangular frame in metres around an origin: x east, y north.
///
/// The map from longitude/latitude is affine, so straight lon/lat edges (RFC 7946) stay straight
/// and point-in-polygon answers are the same as in degrees; distances are true near the origin
/// latitude, which SPEC §5 fixes at the centre of the fence's bounding box.
struct LocalFrame: Hashable {
    let originLatitude: Double
    let originLongitude: Double
    let metresPerDegreeEast: Double

    init(originLatitude: Double, originLongitude: Double) {
        self.originLatitude = originLatitude
        self.originLongitude = originLongitude
        self.metresPerDegreeEast = Earth.metresPerDegree * cos(originLatitude * .pi / 180)
    }

    @inline(__always) func x(longitude: Double) -> Double { (longitude - originLongitude) * metresPerDegreeEast }
    @inline(__always) func y(latitude: Double) -> Double { (latitude - originLatitude) * Earth.metresPerDegree }
    @inline(__always) func longitude(x: Double) -> Double { x / metresPerDegreeEast + originLongitude }
    @inline(__always) func latitude(y: Double) -> Double { y / Earth.metresPerDegree + originLatitude }
}
