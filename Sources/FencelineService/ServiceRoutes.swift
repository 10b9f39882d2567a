import CoreMetrics
import Fenceline
import FencelineFormats
import FencelineRun
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Metrics
import NIOCore

/// The HTTP face of the service (SPEC §11): routes, bearer-token auth and JSON errors.
enum ServiceRoutes {
    /// The largest body accepted.
    static let maximumBodyBytes = 16 << 20

    static func router(
        engine: ServiceEngine, store: ServiceStore, metrics: ServiceMetrics, token: String, stopping: StopFlag
    ) -> Router<ServiceContext> {
        // HEAD is GET without the body on every GET route (RFC 9110 §9.1: general-purpose
        // servers support both).
        let router = Router(context: ServiceContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: JSONErrors())
        router.get("healthz") { _, _ in try Self.json(["status": "ok"]) }
        router.get("readyz") { _, _ in try Self.json(["status": "ready"]) }
        // Every other route needs the token (SPEC §11, auth).
        let api = router.group()
            .add(middleware: TokenAuthenticator(token: token))
            .add(middleware: IsAuthenticatedMiddleware())
        addReadingRoutes(to: api, engine: engine, store: store, metrics: metrics, stopping: stopping)
        addRequestRoutes(to: api, engine: engine)
        addWebhookRoutes(to: api, engine: engine, store: store)
        addDeviceRoutes(to: api, engine: engine, store: store)
        addMapRoutes(page: router, api: api, engine: engine)
        api.get("metrics") { _, _ in
            await engine.updateGauges()
            metrics.webhookBacklog.record(try store.outboxCount())
            return response(metrics.exposition(), type: "text/plain; version=0.0.4; charset=utf-8")
        }
        api.get("openapi.yaml") { _, _ in response(PackageResources.openapi_yaml, type: "application/yaml") }
        // Router middleware wraps every route, whenever it is added: this one needs them all.
        router.add(
            middleware: MethodNotAllowed(routes: router.routes.map { ("\($0.path)", $0.method.rawValue) }))
        return router
    }

    /// The routes while the engine is recovered: `/healthz` 200 (alive), `/readyz` 503, and
    /// every other path 503 `starting` with `Retry-After` (after the token check, as once ready).
    static func startingRouter(token: String) -> Router<ServiceContext> {
        let router = Router(context: ServiceContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: JSONErrors())
        router.add(middleware: Starting(authenticator: TokenAuthenticator(token: token)))
        router.get("healthz") { _, _ in try Self.json(["status": "ok"]) }
        router.get("readyz") { _, _ in
            var response = try Self.json(["status": "starting"])
            response.status = .serviceUnavailable
            response.headers[.retryAfter] = "1"
            return response
        }
        return router
    }

    /// Readings in, the event log out (as pages, as a stream) and the export.
    static func addReadingRoutes(
        to router: RouterGroup<ServiceContext>, engine: ServiceEngine, store: ServiceStore, metrics: ServiceMetrics,
        stopping: StopFlag
    ) {
        router.post("v1/readings") { request, _ in
            let type = request.headers[.contentType]?.split(separator: ";").first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            let types: Set = ["application/x-ndjson", "application/ndjson", "application/json", "text/plain"]
            guard let type, types.contains(type) else {
                throw ServiceError(
                    .unsupportedMediaType, code: "unsupported_media_type",
                    "send readings as application/x-ndjson (got \(type ?? "no content type"))")
            }
            // A compressed body would be read as bad lines: refused whole, so the client knows.
            if let coding = request.headers[.contentEncoding],
                !coding.split(separator: ",").allSatisfy({
                    $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity"
                })
            {
                var refusal = ServiceError(
                    .unsupportedMediaType, code: "unsupported_media_type",
                    "send readings without a content coding (got Content-Encoding: \(coding))"
                ).response
                refusal.headers[.acceptEncoding] = "identity"  // RFC 7694 §3
                return refusal
            }
            let buffer = try await collectBody(request)
            let key = request.headers[HTTPField.Name("Idempotency-Key")!]
            let answer: [UInt8]
            let started = ContinuousClock.now
            do {
                answer = try await engine.ingest(Array(buffer.readableBytesView), idempotencyKey: key).json
                metrics.ingestLatency.record(duration: ContinuousClock.now - started)
            } catch let error as TooManyEvents {
                throw ServiceError(
                    .unprocessableContent, code: "too_many_events",
                    "line \(error.line) takes the batch past \(error.limit) events (a clock jump?); nothing of the "
                        + "batch was applied: send it in smaller batches, or move the clock in smaller steps",
                    line: error.line)
            } catch let error as LineTooLong {
                throw ServiceError(
                    .contentTooLarge, code: "line_too_long",
                    "line \(error.line) is over \(error.limit >> 20) MiB; nothing of the batch was applied",
                    line: error.line)
            }
            return Self.response(answer, type: "application/json")
        }
        router.get("v1/events") { request, _ in
            let after = try integer(request, "after", default: 0, in: 0...Int.max)
            // A page holds at most 10,000 events whatever the limit (SPEC §11 sets none); `next`
            // says where to go on.
            let limit = min(try integer(request, "limit", default: 1000, in: 1...Int.max), 10_000)
            let events = try store.events(after: after, limit: limit)
            var body = Array(#"{"events":["#.utf8)
            for (index, event) in events.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                body += event.json
            }
            body += Array(#"],"next":\#(events.last?.seq ?? after)}"#.utf8)
            return Self.response(body, type: "application/json")
        }
        router.get("v1/events/stream") { request, _ in
            var after = try integer(request, "after", default: 0, in: 0...Int.max)
            // An empty one is no id, as an EventSource that has seen none would mean it.
            if let resume = request.headers[HTTPField.Name("Last-Event-ID")!], !resume.isEmpty {
                guard let seq = Int(resume), seq >= 0 else {
                    throw ServiceError(
                        .badRequest, code: "invalid_parameter", "Last-Event-ID must be an event's seq",
                        field: "Last-Event-ID")
                }
                after = seq
            }
            let start = after
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    // Ended as soon as the subscriber goes away: a stream would learn of it only
                    // from a write that fails, and one catching up reads the log from the store,
                    // page after page, for a connection nobody reads.
                    metrics.countSubscriber(by: 1)
                    defer { metrics.countSubscriber(by: -1) }
                    try await request.body.consumeWithCancellationOnInboundClose { _ in
                        try await streamEvents(
                            after: start, from: store, feed: engine.feed, stopping: stopping, into: &writer)
                    }
                    try await writer.finish(nil)
                })
        }
        router.get("v1/export") { _, _ in
            // Streamed a page of the journal at a time (a store's journal can outgrow memory), all
            // from one snapshot, so that a prune (--retention) cannot cut it; the base it starts
            // after is named in a header, as GET /v1/export/checkpoint names its own.
            let snapshot = try store.snapshot()
            let base = try ServiceStore.basePosition(in: snapshot)
            return Response(
                status: .ok, headers: [.contentType: "application/x-ndjson", Self.exportBase: "\(base)"],
                body: ResponseBody { writer in
                    var position = base
                    while true {
                        let entries = try ServiceStore.journal(in: snapshot, after: position, limit: 10_000)
                        guard let last = entries.last else { break }
                        var buffer = ByteBuffer()
                        for entry in entries {
                            buffer.writeBytes(entry.line)
                            buffer.writeInteger(UInt8(0x0A))
                        }
                        try await writer.write(buffer)
                        position = last.position
                    }
                    try await writer.finish(nil)
                })
        }
        router.get("v1/export/checkpoint") { _, _ in
            guard let base = try store.baseCheckpoint() else {
                throw ServiceError(
                    .notFound, code: "not_found",
                    "nothing was dropped (--retention): the export starts from the store's first catalog")
            }
            var response = Self.response(base.state, type: "application/octet-stream")
            response.headers[Self.exportBase] = "\(base.journalPosition)"
            return response
        }
    }

    /// An integer query parameter, `fallback` when absent; anything else but an integer in
    /// `range` is a 400 naming it.
    static func integer(_ request: Request, _ name: String, default fallback: Int, in range: ClosedRange<Int>) throws
        -> Int
    {
        guard let text = request.uri.queryParameters.get(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            let bounds =
                range.upperBound == Int.max ? "≥ \(range.lowerBound)" : "in \(range.lowerBound)…\(range.upperBound)"
            throw ServiceError(
                .badRequest, code: "invalid_parameter", "\(name) must be an integer \(bounds)", field: name)
        }
        return value
    }

    /// How long a subscriber that has caught up waits before it looks again: each look that finds
    /// events is a write, so a longer wait sends a hundred subscribers' events in fewer, larger
    /// writes (they cost ingest on the same cores), at the price of that much delay.
    static let streamPoll = Duration.milliseconds(200)
    /// The most a subscriber's look takes from the feed in one write (bytes); one that takes this
    /// much is behind, and looks again at once.
    static let streamPage = 1 << 20

    /// Server-Sent Events from the log: every event after `seq`, then each as it is committed,
    /// with `id: <seq>` so that `Last-Event-ID` resumes with no gap and no repeat, and a comment
    /// every 15 s to keep proxies from closing a quiet stream. The log is polled (``streamPoll``
    /// apart once the subscriber has caught up): readers never hold up ingest, and a reader that
    /// falls behind catches up from the store.
    static func streamEvents(
        after seq: Int, from store: ServiceStore, feed: EventFeed, stopping: StopFlag,
        into writer: inout any ResponseBodyWriter
    ) async throws {
        var last = seq
        var quiet = Duration.zero
        try await writer.write(ByteBuffer(string: ": fenceline event stream\n\n"))
        // A graceful shutdown (SIGTERM) ends the stream; the client resumes with Last-Event-ID.
        while !Task.isCancelled && !stopping.isSet {
            // What is new goes out in one write (one flush): a write per event or per page cost
            // a hundred subscribers a system call each, and slowed ingest on the same cores.
            // A subscriber that has caught up waits a poll before it looks again, even when it
            // just wrote: under steady ingest it then writes once a poll rather than once per
            // commit (a hundred subscribers writing per commit slowed ingest by a fifth).
            switch feed.next(after: last, limit: Self.streamPage) {
            case .frames(let frames, let newest):
                try await writer.write(contentsOf: frames)
                last = newest
                quiet = .zero
                if frames.reduce(0, { $0 + $1.readableBytes }) >= Self.streamPage { continue }
                try await Task.sleep(for: Self.streamPoll)
                continue
            case .inStore:
                // Further back than the feed keeps (a reconnect, a new subscriber): from the store.
                let events = try store.events(after: last, limit: 1000)
                if let newest = events.last {
                    var frames = ByteBuffer()
                    for event in events { EventFeed.writeFrame(of: event, into: &frames) }
                    try await writer.write(frames)
                    last = newest.seq
                    quiet = .zero
                    if events.count == 1000 { continue }
                    try await Task.sleep(for: Self.streamPoll)
                    continue
                }
            case .nothing:
                break
            }
            try await Task.sleep(for: Self.streamPoll)
            quiet += Self.streamPoll
            if quiet >= .seconds(15) {
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                quiet = .zero
            }
        }
    }

    /// Requests and delivered notifications, managed live; every change is a control record
    /// applied at the clock and journaled, so the export replays it where it happened.
    static func addRequestRoutes(to router: RouterGroup<ServiceContext>, engine: ServiceEngine) {
        router.get("v1/requests") { _, _ in
            let pending = await engine.pendingRequests()
            var body = Array(#"{"requests":["#.utf8)
            for (index, entry) in pending.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                body += requestObject(entry.request, next: entry.next)
            }
            body += Array("]}".utf8)
            return response(body, type: "application/json")
        }
        router.get("v1/requests/:id") { _, context in
            let id = try pathID(context)
            guard let found = await engine.pendingRequest(id) else {
                throw ServiceError(.notFound, code: "not_found", "no pending request \"\(id)\"")
            }
            return response(requestObject(found.request, next: found.next), type: "application/json")
        }
        router.put("v1/requests/:id") { request, context in
            let id = try pathID(context)
            var object = try await jsonObject(request, what: "a request (SPEC §2)")
            if let given = object["id"], given as? String != id {
                throw ServiceError(
                    .unprocessableContent, code: "invalid_request", "the body's id differs from the path's \"\(id)\"",
                    field: "id")
            }
            object["id"] = id
            // What GET adds is not part of a request: a GET's object PUT back journals none of it.
            object.removeValue(forKey: "nextTriggerDate")
            let record: [String: Any] = ["op": "add", "request": object]
            let line = Array(try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]))
            let existed = try await apply(line, engine: engine) { $0.isPending(id) }
            // A request that left pending as it was added (its expires already past), or was
            // removed by a call that ran meanwhile, is answered with its id alone.
            let added = await engine.pendingRequest(id)
            let status: HTTPResponse.Status = existed ? .ok : .created
            guard let added else { return try json(["id": id], status: status) }
            return response(requestObject(added.request, next: added.next), type: "application/json", status: status)
        }
        router.delete("v1/requests/:id") { _, context in
            let id = try pathID(context)
            let line = try record(op: "removePending", ids: [id])
            guard try await engine.controlIfPending(id, line) else {
                throw ServiceError(.notFound, code: "not_found", "no pending request \"\(id)\"")
            }
            return try json(["removed": [id]])
        }
        router.delete("v1/requests") { _, _ in
            let removed = try await apply(Array(#"{"op":"removeAllPending"}"#.utf8), engine: engine) {
                $0.pendingRequests.map(\.id)
            }
            return try json(["removed": removed])
        }
        router.get("v1/categories") { _, _ in
            try json(CategorySet(await engine.categories()))
        }
        router.put("v1/categories") { request, _ in
            // The catalog's member, or its array alone.
            let body = try await jsonValue(request, what: #"the category set, {"categories": […]} (SPEC §2)"#)
            guard let categories = body as? [Any] ?? (body as? [String: Any]).map({ $0["categories"] ?? NSNull() })
            else {
                throw ServiceError(
                    .unprocessableContent, code: "invalid_request",
                    #"the body must be {"categories": […]} or the array alone"#)
            }
            let record: [String: Any] = ["op": "setCategories", "categories": categories]
            let line = Array(try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]))
            do {
                return try json(CategorySet(try await engine.replaceCategories(line)))
            } catch let error as LineError {
                throw ServiceError(.unprocessableContent, code: "invalid_request", error.message, field: error.field)
            } catch let error as CategoryInUse {
                throw ServiceError(
                    .conflict, code: "category_in_use",
                    "pending request \"\(error.request)\" names category \"\(error.category)\"; replace or remove it first",
                    field: "categories")
            }
        }
        router.post("v1/responses") { request, _ in
            var object = try await jsonObject(request, what: "a response (SPEC §8)")
            // Applied at the clock, as every change made through the API is.
            object.removeValue(forKey: "time")
            object["op"] = "respond"
            let line = Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            do {
                let event = try await engine.respond(line)
                return response(NDJSONEventEncoder.unnumberedResponse(event), type: "application/json")
            } catch let error as LineError {
                throw ServiceError(.unprocessableContent, code: "invalid_request", error.message, field: error.field)
            } catch let refusal as ResponseRefusal {
                switch refusal.code {
                case .notDelivered:
                    throw ServiceError(.notFound, code: "not_found", refusal.message, field: refusal.field)
                case .invalidAction:
                    throw ServiceError(
                        .unprocessableContent, code: "invalid_response", refusal.message, field: refusal.field)
                }
            }
        }
        router.get("v1/delivered") { request, _ in
            let device = request.uri.queryParameters.get("device")
            let list = StateEncoder.deliveredList(await engine.delivered(device: device))
            let body = Array(#"{"delivered":"#.utf8) + list + Array("}".utf8)
            return response(body, type: "application/json")
        }
        router.delete("v1/delivered/:id") { _, context in
            let id = try pathID(context)
            guard try await engine.controlIfDelivered(id, record(op: "removeDelivered", ids: [id])) else {
                throw ServiceError(.notFound, code: "not_found", "no delivered notification of request \"\(id)\"")
            }
            return try json(["removed": [id]])
        }
        router.delete("v1/delivered") { _, _ in
            let removed = try await apply(Array(#"{"op":"removeAllDelivered"}"#.utf8), engine: engine) {
                Set($0.deliveredNotifications.map(\.requestID)).sorted()
            }
            return try json(["removed": removed])
        }
    }

    /// The category set as the catalog writes it (SPEC §2).
    struct CategorySet: Encodable {
        struct Category: Encodable {
            var id: String
            var actions: [Action]
            var options: [String]
        }
        struct Action: Encodable {
            var id: String
            var title: String
            var options: [String]
            var textInput: TextInput?
        }
        struct TextInput: Encodable {
            var button: String
            var placeholder: String
        }
        var categories: [Category]

        init(_ categories: [NotificationCategory]) {
            self.categories = categories.map { category in
                Category(
                    id: category.id,
                    actions: category.actions.map { action in
                        Action(
                            id: action.id, title: action.title, options: action.options,
                            textInput: action.textInput.map {
                                TextInput(button: $0.button, placeholder: $0.placeholder)
                            })
                    }, options: category.options)
            }
        }
    }

    /// A pending request as the catalog writes it (SPEC §2, every setting resolved), with its
    /// `nextTriggerDate` (`null` for a location trigger, or one that will not fire again).
    static func requestObject(_ request: NotificationRequest, next: Timestamp?) -> [UInt8] {
        var bytes = RequestEncoder.encode(request)
        bytes.removeLast()  // its closing brace
        bytes += Array(#","nextTriggerDate":"#.utf8)
        bytes += Array((next.map { "\"\($0.rfc3339)\"" } ?? "null").utf8)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The path's `:id`, percent-decoded (a device named `truck 17/NL` is `truck%2017%2FNL` in a
    /// path); 400 when its escapes are not valid UTF-8.
    static func pathID(_ context: ServiceContext) throws -> String {
        let raw = try context.parameters.require("id")
        guard let id = raw.removingPercentEncoding else {
            throw ServiceError(.badRequest, code: "malformed", "the path's id \"\(raw)\" is not valid percent-encoding")
        }
        return id
    }

    static func record(op: String, ids: [String]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: ["op": op, "ids": ids], options: [.sortedKeys]))
    }

    /// Applies an API control record and returns what `look` found just before; an invalid one is
    /// a 422 naming the field.
    static func apply<Found: Sendable>(
        _ line: [UInt8], engine: ServiceEngine, lookingFirst look: @Sendable (Engine) -> Found
    ) async throws -> Found {
        do {
            return try await engine.control(line, lookingFirst: look)
        } catch let error as LineError {
            throw ServiceError(
                .unprocessableContent, code: "invalid_request", error.message,
                field: error.field.map { $0.hasPrefix("request.") ? String($0.dropFirst(8)) : $0 })
        }
    }

    static func json(_ value: some Encodable) throws -> Response {
        try json(value, status: .ok)
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return response(Array(try encoder.encode(value)), type: "application/json", status: status)
    }

    /// The journal position an export starts after, on it and on its base checkpoint: a client
    /// that gets two different ones read across a prune and reads again.
    static let exportBase = HTTPField.Name("Fenceline-Export-Base")!

    static func response(_ bytes: [UInt8], type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: type],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
