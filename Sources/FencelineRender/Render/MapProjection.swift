public import Fenceline
public import FencelineFormats
import Foundation

/// The map a trace is drawn on: equirectangular (plate carrée) with its true-scale parallel at the
/// centre of the drawn box, north up, x to the east and y down, in SVG pixels.
///
/// Why this projection: it is the local frame the engine measures polygons and corridors in
/// (SPEC §5), so edges straight in lon/lat stay straight as the engine reads them, and the scale
/// is the same along every meridian. Distances east–west are exact on the centre parallel and
/// stretch by cos φ₀ / cos φ away from it, which is invisible at the size of a city and honest (the
/// scale bar says which latitude it holds at) for a continent.
///
/// Longitudes are shown in one of two ranges, whichever makes the drawn box narrower: −180…180 or
/// 0…360. Data around the antimeridian (a ship near Fiji) is thus drawn in one piece; data spanning
/// more than half the globe in both ranges is drawn in −180…180 with track segments that jump more
/// than 180° left out.
public struct MapProjection: Hashable, Sendable {
    /// The latitude where east–west distances are exact, in degrees.
    public var centerLatitude: Double
    /// The longitude drawn at ``centerX``, in the display range.
    public var centerLongitude: Double
    /// Pixels per metre along every meridian and along the parallel at ``centerLatitude``.
    public var pixelsPerMetre: Double
    /// The pixel position of (``centerLatitude``, ``centerLongitude``).
    public var centerX: Double
    /// The pixel position of (``centerLatitude``, ``centerLongitude``).
    public var centerY: Double
    /// Whether longitudes are shown in 0…360 (true) or −180…180 (false).
    public var showsLongitudesFrom0To360: Bool

    /// The cosine that turns degrees of longitude into metres, kept away from 0 at the poles.
    var eastScale: Double { max(0.01, cos(centerLatitude * .pi / 180)) }

    /// Creates a projection from its parameters.
    public init(
        centerLatitude: Double, centerLongitude: Double, pixelsPerMetre: Double, centerX: Double, centerY: Double,
        showsLongitudesFrom0To360: Bool = false
    ) {
        self.centerLatitude = centerLatitude
        self.centerLongitude = centerLongitude
        self.pixelsPerMetre = pixelsPerMetre
        self.centerX = centerX
        self.centerY = centerY
        self.showsLongitudesFrom0To360 = showsLongitudesFrom0To360
    }

    /// Where `coordinate` is drawn, its longitude first brought into the display range.
    public func point(_ coordinate: Coordinate) -> (x: Double, y: Double) {
        point(latitude: coordinate.latitude, longitude: displayLongitude(coordinate.longitude))
    }

    /// Where a position already in the display range (or unwrapped next to it) is drawn.
    func point(latitude: Double, longitude: Double) -> (x: Double, y: Double) {
        let x = centerX + (longitude - centerLongitude) * Earth.metresPerDegree * eastScale * pixelsPerMetre
        let y = centerY - (latitude - centerLatitude) * Earth.metresPerDegree * pixelsPerMetre
        return (x, y)
    }

    /// Pixels per metre going east at `latitude` (equal to ``pixelsPerMetre`` at the centre).
    public func pixelsPerMetreEast(atLatitude latitude: Double) -> Double {
        pixelsPerMetre * eastScale / max(0.01, cos(latitude * .pi / 180))
    }

    /// `longitude` moved by whole turns into the display range.
    public func displayLongitude(_ longitude: Double) -> Double {
        Self.wrap(longitude, from0To360: showsLongitudesFrom0To360)
    }

    static func wrap(_ longitude: Double, from0To360: Bool) -> Double {
        let low = from0To360 ? 0.0 : -180.0
        guard longitude < low || longitude >= low + 360 else { return longitude }
        return longitude - 360 * ((longitude - low) / 360).rounded(.down)
    }

    /// The projection that fits `bounds` (display longitudes) into `width` × at most `maximumHeight`
    /// pixels, centred at (`centerX`, `centerY`), with the height it needs.
    static func fitting(
        _ bounds: GeoBounds, width: Double, maximumHeight: Double, centerX: Double, centerY: Double,
        from0To360: Bool
    ) -> (projection: MapProjection, height: Double) {
        let latitude = (bounds.south + bounds.north) / 2
        var projection = MapProjection(
            centerLatitude: latitude, centerLongitude: (bounds.west + bounds.east) / 2, pixelsPerMetre: 1,
            centerX: centerX, centerY: centerY, showsLongitudesFrom0To360: from0To360)
        let metresEast = max(1, (bounds.east - bounds.west) * Earth.metresPerDegree * projection.eastScale)
        let metresNorth = max(1, (bounds.north - bounds.south) * Earth.metresPerDegree)
        projection.pixelsPerMetre = min(width / metresEast, maximumHeight / metresNorth)
        return (projection, metresNorth * projection.pixelsPerMetre)
    }
}
