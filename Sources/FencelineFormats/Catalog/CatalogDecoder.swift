public import Fenceline

/// Decodes trigger catalogs (SPEC §2): the JSON catalog object and the GeoJSON FeatureCollection.
///
/// Every problem is collected, not just the first, each naming the request id and the JSON path;
/// fences are checked with GEOS through ``RequestValidator``. Unknown members are warnings.
public final class CatalogDecoder {
    /// A decoded catalog and the warnings met on the way.
    public struct Decoded: Sendable {
        public var catalog: Catalog
        /// Non-fatal findings, such as unknown fields (likely typos) and repeated ids.
        public var warnings: [CatalogIssue]
    }

    let validator: RequestValidator

    /// Creates a decoder with its own GEOS context for fence validation.
    public init() {
        validator = RequestValidator()
    }

    /// Decodes a catalog file's bytes.
    /// - Throws: ``CatalogError`` with every issue (a syntax error is one issue with its line and column).
    public func decode(_ bytes: [UInt8]) throws(CatalogError) -> Decoded {
        let result = bytes.withUnsafeBufferPointer { buffer -> Result<Decoded, CatalogError> in
            do throws(JSONSyntaxError) {
                return try decodeDocument(buffer)
            } catch {
                let (line, column) = Self.lineAndColumn(of: error.offset, in: bytes)
                return .failure(
                    CatalogError(issues: [
                        CatalogIssue(
                            requestID: nil, path: "", message: "line \(line), column \(column): \(error.message)")
                    ]))
            }
        }
        return try result.get()
    }

    /// The top-level object goes on a tape except its request list, which is only matched for
    /// brackets at first; once `categories` and `defaults` are known (they may come after it), the
    /// list is parsed and decoded one request at a time on a reused tape, so memory stays that of
    /// one request however large the catalog.
    private func decodeDocument(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> Result<
        Decoded, CatalogError
    > {
        let shapeError = CatalogError(issues: [
            CatalogIssue(
                requestID: nil, path: "",
                message: "a catalog is a JSON object with \"requests\", or a GeoJSON FeatureCollection")
        ])
        let document = try JSONTape.parse(bytes, deferringListsNamed: ["requests", "features"])
        defer { withExtendedLifetime(document) {} }  // refs do not keep their tape alive
        let sink = IssueSink()
        var catalog = Catalog()
        guard let top = FieldReader(document.root, path: "", sink: sink) else { return .failure(shapeError) }
        let isFeatureCollection = top.string("type") == "FeatureCollection"
        if isFeatureCollection {
            top.warnUnknown(known: ["type", "features", "categories", "defaults", "name", "crs", "bbox"])
        } else {
            if let type = top.string("type") {
                sink.add("type", "unknown catalog type \"\(type)\"; expected \"FeatureCollection\" or no type")
            }
            top.warnUnknown(known: ["categories", "requests", "defaults"])
        }
        catalog.categories = decodeCategories(top["categories"], sink: sink)
        if let defaults = FieldReader(top["defaults"], path: "defaults", sink: sink, required: false) {
            defaults.warnUnknown(known: ["hysteresis", "filters"])
            catalog.defaultHysteresis = decodeHysteresis(
                defaults["hysteresis"], path: "defaults.hysteresis", base: .default, sink: sink)
            var filters = decodeFilters(
                defaults["filters"], path: "defaults.filters", base: PositionFilters(), sink: sink)
            // Reported here, once, rather than at every request that would inherit them.
            for problem in filters.problems {
                sink.add("defaults.filters.\(problem.field)", problem.message)
                filters = PositionFilters()
            }
            catalog.defaultFilters = filters
        }
        let categories = Set(catalog.categories.map(\.id))
        let key = isFeatureCollection ? "features" : "requests"
        guard let list = top[key] else {
            sink.add(key, "missing field \"\(key)\"")
            return .failure(CatalogError(issues: sink.issues))
        }
        guard list.kind == .array else {
            sink.add(key, "expected an array, found \(list.kindName)")
            return .failure(CatalogError(issues: sink.issues))
        }
        // Each id's position in `catalog.requests`. Both sized for the list's objects (counted when
        // its brackets were matched), so that a million requests go in without either growing.
        var positions = RequestIDTable()
        positions.reserveCapacity(list.deferredContainers ?? 0)
        catalog.requests.reserveCapacity(list.deferredContainers ?? 0)
        // Positions of requests a later one with their id replaced: left in place while decoding
        // (so every position stays valid) and taken out once at the end.
        var replaced: [Int] = []
        var elements = JSONTape.DeferredElements(list)
        let tape = JSONTape(bytes: bytes)
        defer { withExtendedLifetime(tape) {} }
        // Each request is claimed in `positions` one request after it is decoded, its id's place
        // prefetched meanwhile: the table is megabytes and each id's place random, so claiming at
        // once waited on a cache miss per request.
        var unclaimed: (request: NotificationRequest, fingerprint: UInt64, index: Int, warnings: Int)?
        func claim() {
            guard let (request, fingerprint, index, warnings) = unclaimed else { return }
            unclaimed = nil
            let position = Int32(catalog.requests.count)
            if let earlier = positions.claim(
                request.id, fingerprint: fingerprint, slot: position, idOf: { catalog.requests[Int($0)].id })
            {
                // Among the warnings as if claimed at once: before those of the requests after it.
                sink.warnings.insert(
                    CatalogIssue(
                        requestID: request.id, path: IssueSink.path(ofElement: index, in: key),
                        message: "repeats the id \"\(request.id)\"; the later request replaces the earlier one"),
                    at: warnings)
                replaced.append(Int(earlier))
            }
            catalog.requests.append(request)
        }
        var index = 0
        while let item = try elements.next(on: tape) {
            defer { index += 1 }
            // Paths below are relative to the element's, which the sink puts first in a message.
            sink.element = (key, index)
            let request =
                isFeatureCollection
                ? decodeFeature(item, path: "", defaults: catalog.defaults, categories: categories, sink: sink)
                : decodeRequest(item, path: "", defaults: catalog.defaults, categories: categories, sink: sink)
            sink.element = nil
            guard let request else { continue }
            let fingerprint = RequestIDTable.fingerprint(request.id)
            positions.prefetch(fingerprint: fingerprint)
            claim()
            unclaimed = (request, fingerprint, index, sink.warnings.count)
        }
        claim()
        if !replaced.isEmpty {
            let gone = Set(replaced)
            catalog.requests = catalog.requests.indices.filter { !gone.contains($0) }.map { catalog.requests[$0] }
        }
        if !sink.issues.isEmpty { return .failure(CatalogError(issues: sink.issues)) }
        catalog.markValidated()  // every request passed the engine's own validator above
        return .success(Decoded(catalog: catalog, warnings: sink.warnings))
    }

    /// Decodes and validates one request in the catalog layout (an `add` control record).
    func decodeRequest(
        _ value: JSONRef, path: String, defaults: RequestDefaults, categories: Set<String>
    ) -> Result<NotificationRequest, CatalogError> {
        let sink = IssueSink()
        guard let request = decodeRequest(value, path: path, defaults: defaults, categories: categories, sink: sink),
            sink.issues.isEmpty
        else { return .failure(CatalogError(issues: sink.issues)) }
        return .success(request)
    }

    func decodeRequest(
        _ value: JSONRef, path: String, defaults: RequestDefaults, categories: Set<String>, sink: IssueSink
    ) -> NotificationRequest? {
        sink.requestID = nil
        guard let fields = FieldReader(value, path: path, sink: sink) else { return nil }
        let before = sink.issues.count
        let id = fields.string("id", required: true)
        sink.requestID = id
        fields.warnUnknown(known: Self.requestFields)
        // A member's path is made only when it is there: most requests of a large catalog have
        // no content, schedule or filters, and a path is a string built per request.
        let content = fields["content"].map { decodeContent($0, path: fields.at("content"), sink: sink) }
        let devices = fields.strings("devices")
        let schedule = fields["schedule"].flatMap { decodeSchedule($0, path: fields.at("schedule"), sink: sink) }
        let trigger = decodeTrigger(
            fields["trigger"], path: fields.at("trigger"), defaults: defaults.hysteresis, sink: sink)
        let filters =
            fields["filters"].map {
                decodeFilters($0, path: fields.at("filters"), base: defaults.filters, sink: sink)
            } ?? defaults.filters
        let expires = fields.timestamp("expires")
        // Validated even when some member could not be read, so that the problems of its other
        // members are reported with that one (SPEC §2: all at once). Without an id or a trigger,
        // stand-ins take their place, and what is said of them is left out (the validator's other
        // checks do not depend on the trigger).
        let request = NotificationRequest(
            id: id ?? "", contentIfAny: content, trigger: trigger ?? Self.standInTrigger, devices: devices,
            schedule: schedule, filters: filters, expires: expires)
        let read = Array(sink.issues[before...])  // a copy: the sink grows below
        for problem in validator.problems(in: request, categories: categories) {
            if trigger == nil && (problem.path == "trigger" || problem.path.hasPrefix("trigger.")) { continue }
            sink.add(IssueSink.join(path, problem.path), problem.message, unlessAMemberOf: path, wasUnread: read)
        }
        guard id != nil, trigger != nil else { return nil }
        return sink.issues.count == before ? request : nil
    }

    /// What a request whose trigger could not be read is validated with: one the validator
    /// finds nothing to say of.
    private static let standInTrigger = Trigger.timeInterval(TimeIntervalTrigger(interval: TimeSpan(seconds: 60)))

    static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}

@available(*, unavailable)
extension CatalogDecoder: Sendable {}
