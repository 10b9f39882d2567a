import Fenceline

extension CatalogDecoder {
    /// The fence of a catalog-layout region trigger: `center` + `radius`, or `geometry` (+ `corridor`).
    func decodeRegionGeometry(_ fields: FieldReader, sink: IssueSink) -> RegionGeometry? {
        let hasCircle = fields.has("center") || fields.has("radius")
        if hasCircle && fields.has("geometry") {
            sink.add(fields.path, "give either center + radius or geometry, not both")
            return nil
        }
        // `corridor` widens a LineString only: elsewhere it would be ignored, so say so.
        if fields.has("corridor"),
            hasCircle
                || fields["geometry"].flatMap({ FieldReader($0, path: "", sink: IssueSink()) })?.string("type")
                    != "LineString"
        {
            sink.warn(fields.at("corridor"), "\"corridor\" applies to a LineString geometry only and is ignored here")
        }
        if hasCircle {
            // Each member is read (and a bad one reported) before any is given up on, and a radius
            // is checked without its centre, so that one problem hides no other (SPEC §2).
            let center = FieldReader(fields["center"], member: "center", of: fields)
            center?.warnUnknown(known: Self.centerFields)
            let lat = center?.number("lat", required: true)
            let lon = center?.number("lon", required: true)
            let radius = fields.number("radius", required: true)
            guard let lat, let lon, let radius else {
                if let radius, let problem = GeometryValidator.radiusProblem(radius) {
                    sink.add(fields.at("radius"), problem)
                }
                return nil
            }
            return .circle(center: Coordinate(latitude: lat, longitude: lon), radius: radius)
        }
        guard fields.has("geometry") else {
            sink.add(fields.path, "a region trigger needs center + radius, or a GeoJSON geometry")
            return nil
        }
        return decodeGeoJSONGeometry(
            fields["geometry"], member: "geometry", of: fields, radius: fields.number("radius"),
            corridor: { fields.number("corridor") }, radiusPath: fields.at("radius"), sink: sink)
    }

    /// A GeoJSON geometry as a fence: Polygon, MultiPolygon, LineString (with `corridor`, default
    /// 25 m) or Point (with a radius).
    func decodeGeoJSONGeometry(
        _ value: JSONRef?, member key: String, of parent: FieldReader, radius: Double?, corridor: () -> Double?,
        radiusPath: @autoclosure () -> String, sink: IssueSink
    ) -> RegionGeometry? {
        guard let geometry = FieldReader(value, member: key, of: parent) else { return nil }
        geometry.warnUnknown(known: Self.geometryFields)
        guard let type = geometry.string("type", required: true) else { return nil }
        let coordinates = geometry["coordinates"]
        // Paths are made only for a message (a large catalog reads a million geometries).
        func coordinatesPath() -> String { geometry.at("coordinates") }
        guard coordinates != nil else {
            sink.add(coordinatesPath(), "missing field \"coordinates\"")
            return nil
        }
        switch type {
        case "Point":
            guard let center = position(coordinates, path: coordinatesPath(), sink: sink) else { return nil }
            guard let radius else {
                sink.add(radiusPath(), "a Point fence needs a radius in metres")
                return nil
            }
            return .circle(center: center, radius: radius)
        case "Polygon":
            return rings(coordinates, path: coordinatesPath(), sink: sink).map { .polygons([$0]) }
        case "MultiPolygon":
            guard let polygons = coordinates?.elements else {
                sink.add(coordinatesPath(), "expected an array of polygons")
                return nil
            }
            var result: [[[Coordinate]]] = []
            for (index, polygon) in polygons.enumerated() {
                guard let rings = rings(polygon, path: "\(coordinatesPath())[\(index)]", sink: sink) else { return nil }
                result.append(rings)
            }
            return .polygons(result)
        case "LineString":
            guard let path = positions(coordinates, path: coordinatesPath(), sink: sink) else { return nil }
            return .corridor(path: path, width: corridor() ?? 25)
        default:
            sink.add(
                geometry.at("type"),
                "unsupported geometry type \"\(type)\"; expected Polygon, MultiPolygon, LineString or Point")
            return nil
        }
    }

    private func rings(_ value: JSONRef?, path: @autoclosure () -> String, sink: IssueSink) -> [[Coordinate]]? {
        guard let items = value?.elements else {
            sink.add(path(), "expected an array of rings")
            return nil
        }
        var rings: [[Coordinate]] = []
        for (index, item) in items.enumerated() {
            guard let ring = positions(item, path: "\(path())[\(index)]", sink: sink) else { return nil }
            rings.append(ring)
        }
        return rings
    }

    /// A ring or path; the hot loop of a big catalog, so it reads the tape directly and builds a
    /// position's path only for a message.
    private func positions(_ value: JSONRef?, path: @autoclosure () -> String, sink: IssueSink) -> [Coordinate]? {
        guard let items = value?.elements else {
            sink.add(path(), "expected an array of [lon, lat] positions")
            return nil
        }
        var result: [Coordinate] = []
        result.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            guard let point = position(item) else {
                sink.add("\(path())[\(index)]", "expected a position [lon, lat]")
                return nil
            }
            result.append(point)
        }
        return result
    }

    private func position(_ value: JSONRef?, path: @autoclosure () -> String, sink: IssueSink) -> Coordinate? {
        guard let value, let point = position(value) else {
            sink.add(path(), "expected a position [lon, lat]")
            return nil
        }
        return point
    }

    /// `[lon, lat]` or `[lon, lat, altitude…]`.
    private func position(_ value: JSONRef) -> Coordinate? {
        let nodes = value.tape.nodes
        let node = nodes[value.index]
        guard node.kind == .array, node.count >= 2 else { return nil }
        let lon = nodes[value.index + 1]
        let lat = nodes[value.index + 2]
        guard lon.kind == .number, lat.kind == .number else { return nil }
        return Coordinate(latitude: lat.number, longitude: lon.number)
    }
}
