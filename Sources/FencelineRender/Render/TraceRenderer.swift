public import Fenceline
import FencelineFormats

/// Draws a run as a picture (SPEC §9, `fenceline render`): the catalog's fences, each device's
/// track and the events, with a legend, a scale bar and a title line.
///
/// The map is equirectangular around the centre of everything drawn (see ``MapProjection``), north
/// up, fitted into ``Options/width`` with the legend in a panel on the right and the scale bar
/// below, so neither covers the data. Output is deterministic: devices in natural order, fences in
/// catalog order, events in the given order, every number to a tenth of a pixel.
///
/// ```swift
/// let renderer = TraceRenderer(catalog: catalog)
/// let svg = renderer.svg(fixes: fixes, events: events)
/// ```
public struct TraceRenderer: Sendable {
    /// How the picture is laid out.
    public struct Options: Sendable {
        /// The picture's width in pixels (at least 480); the height follows from the data's shape.
        public var width: Double = 1200
        /// The title line; `nil` writes "Fenceline trace".
        public var title: String?
        /// Above this many fences, fence ids are not written on the map (tooltips keep them).
        public var maximumFenceLabels = 200
        /// Devices listed in the legend before "+ N more devices".
        public var maximumLegendDevices = 12
        /// Whether each fix is drawn as a dot; `nil` draws them for up to 3 devices and 5,000 fixes.
        public var showsFixes: Bool?

        /// The defaults: 1200 px wide, labels up to 200 fences, 12 devices in the legend.
        public init() {}
    }

    /// The fences to draw (region requests; other triggers are only counted).
    public let catalog: Catalog
    /// The layout settings.
    public let options: Options

    /// Creates a renderer for `catalog`.
    public init(catalog: Catalog, options: Options = Options()) {
        self.catalog = catalog
        self.options = options
    }

    /// A standalone SVG document (UTF-8 text) of the fences, the device tracks and the events.
    public func svg(fixes: [Fix], events: [Event]) -> String {
        let scene = TraceScene(catalog: catalog, fixes: fixes, events: events)
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + svgElement(scene, layout: layout(scene))
    }

    /// The projection ``svg(fixes:events:)`` uses for these inputs; `nil` when there is nothing
    /// to draw. Lets callers (and tests) find where a coordinate lands in the picture.
    public func projection(fixes: [Fix], events: [Event]) -> MapProjection? {
        layout(TraceScene(catalog: catalog, fixes: fixes, events: events)).projection
    }

    /// Where the parts of the picture go.
    struct Layout {
        var width: Double
        var height: Double
        var mapX: Double
        var mapY: Double
        var mapWidth: Double
        var mapHeight: Double
        var legendX: Double
        var footerY: Double
        var projection: MapProjection?
        var hasHeader: Bool
        /// Sizes that depend on how crowded the picture is.
        var trackWidth: Double
        var markerRadius: Double
    }

    static let headerHeight = 64.0
    static let legendWidth = 236.0
    static let footerHeight = 44.0
    static let mapPadding = 18.0

    /// The layout for `scene`; without a header (the HTML page writes its own title) the map
    /// starts near the top.
    func layout(_ scene: TraceScene, withHeader: Bool = true) -> Layout {
        let width = max(480, options.width.isFinite ? options.width : 1200)
        let mapWidth = width - Self.legendWidth - 24
        let devices = scene.tracks.count
        var layout = Layout(
            width: width, height: 0, mapX: 12, mapY: withHeader ? Self.headerHeight : 4, mapWidth: mapWidth,
            mapHeight: 320,
            legendX: width - Self.legendWidth, footerY: 0, projection: nil, hasHeader: withHeader,
            trackWidth: devices <= 3 ? 2.6 : devices <= 12 ? 2 : devices <= 30 ? 1.5 : 1.2,
            markerRadius: scene.marks.count <= 60 ? 7 : scene.marks.count <= 400 ? 5.5 : 4.5)
        if let bounds = scene.bounds {
            let fitted = MapProjection.fitting(
                bounds, width: mapWidth - 2 * Self.mapPadding,
                maximumHeight: max(360, min(mapWidth * 1.15, 1500)) - 2 * Self.mapPadding, centerX: 0, centerY: 0,
                from0To360: scene.from0To360)
            layout.mapHeight = fitted.height + 2 * Self.mapPadding
            layout.projection = fitted.projection
        }
        // The map is at least as tall as the legend beside it; the data stays centred in it.
        layout.mapHeight = max(layout.mapHeight, 320, legendHeight(scene))
        layout.projection?.centerX = layout.mapX + mapWidth / 2
        layout.projection?.centerY = layout.mapY + layout.mapHeight / 2
        layout.footerY = layout.mapY + layout.mapHeight
        layout.height = layout.footerY + Self.footerHeight
        return layout
    }
}
