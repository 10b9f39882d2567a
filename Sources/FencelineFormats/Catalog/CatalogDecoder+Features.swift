import Fenceline

extension CatalogDecoder {
    /// A Feature of a FeatureCollection catalog as a region request: its geometry is the fence and
    /// its `properties` hold every request and trigger field.
    func decodeFeature(
        _ value: JSONRef, path: String, defaults: RequestDefaults, categories: Set<String>, sink: IssueSink
    ) -> NotificationRequest? {
        sink.requestID = nil
        guard let feature = FieldReader(value, path: path, sink: sink) else { return nil }
        feature.warnUnknown(known: Self.featureFields)
        let before = sink.issues.count
        let propertiesPath = feature.at("properties")
        // GeoJSON allows `"properties": null`; anything else but an object is reported, and the
        // Feature is still read (as if empty) so its other problems show too.
        let value = feature["properties"]
        let properties =
            value.flatMap { $0.isNull ? nil : FieldReader($0, path: propertiesPath, sink: sink) }
            ?? FieldReader(emptyAt: propertiesPath, sink: sink)
        var id: String?
        for candidate in [properties["id"], feature["id"]] {
            guard let candidate, let text = candidate.string ?? candidate.numberText else { continue }
            id = text
            break
        }
        guard let id else {
            sink.add(properties.at("id"), "missing id: set properties.id or the Feature's id")
            return nil
        }
        sink.requestID = id
        properties.warnUnknown(known: Self.featurePropertyFields)
        if let type = properties.string("type"), type != "region" {
            sink.add(properties.at("type"), "a Feature is a region request; type must be \"region\" or absent")
        }
        let content = decodeContent(properties["content"], path: properties.at("content"), sink: sink)
        let devices = properties.strings("devices")
        let schedule = decodeSchedule(properties["schedule"], path: properties.at("schedule"), sink: sink)
        let geometry = decodeGeoJSONGeometry(
            feature["geometry"], member: "geometry", of: feature, radius: properties.number("radius"),
            corridor: { properties.number("corridor") }, radiusPath: properties.at("radius"), sink: sink)
        guard let geometry else { return nil }
        let trigger = decodeRegionOptions(properties, geometry: geometry, defaults: defaults.hysteresis, sink: sink)
        let filters = decodeFilters(
            properties["filters"], path: properties.at("filters"), base: defaults.filters, sink: sink)
        let expires = properties.timestamp("expires")
        let request = NotificationRequest(
            id: id, content: content, trigger: .region(trigger), devices: devices, schedule: schedule,
            filters: filters, expires: expires)
        // Validated even when some member could not be read, so that the problems of its other
        // members are reported with that one (SPEC §2: all at once).
        let read = Array(sink.issues[before...])  // a copy: the sink grows below
        for problem in validator.problems(in: request, categories: categories) {
            sink.add(
                IssueSink.join(path, Self.featurePath(problem.path)), problem.message, unlessAMemberOf: path,
                wasUnread: read)
        }
        return sink.issues.count == before ? request : nil
    }

    /// Maps a catalog-layout path (`trigger.radius`) to where a Feature keeps the value.
    static func featurePath(_ path: String) -> String {
        if path.hasPrefix("trigger.geometry") { return String(path.dropFirst("trigger.".count)) }
        if path == "trigger.center" { return "geometry.coordinates" }
        if path.hasPrefix("trigger.") { return "properties." + path.dropFirst("trigger.".count) }
        return "properties.\(path)"
    }
}
