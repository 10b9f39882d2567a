import Fenceline
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import NIOCore

extension ServiceRoutes {
    /// A webhook as the API shows it: never its secret.
    struct WebhookSummary: Encodable {
        var id: String
        var url: String
        var requests: [String]?
        var events: [String]?
        var created: String
        var delivered: Int
        var failed: Int
        var givenUp: Int
        var backlog: Int
    }

    /// `POST /v1/webhooks`, `GET /v1/webhooks`, `DELETE /v1/webhooks/{id}` (SPEC §11, webhooks).
    static func addWebhookRoutes(to router: RouterGroup<ServiceContext>, engine: ServiceEngine, store: ServiceStore) {
        router.post("v1/webhooks") { request, _ in
            let object = try await jsonObject(
                request, what: "a webhook: {\"url\", \"secret\", \"requests\"?, \"events\"?}")
            let webhook = try Self.webhook(from: object)
            try await engine.addWebhook(webhook)
            return try json(summary(of: webhook), status: .created)
        }
        router.get("v1/webhooks") { _, _ in
            try json(["webhooks": try store.webhooks().map(summary(of:))])
        }
        router.delete("v1/webhooks/:id") { _, context in
            let id = try pathID(context)
            guard try await engine.removeWebhook(id: id) else {
                throw ServiceError(.notFound, code: "not_found", "no webhook \"\(id)\"")
            }
            return try json(["removed": [id]])
        }
    }

    /// A new webhook from its JSON object, checked field by field (422 naming the field).
    static func webhook(from object: [String: Any]) throws -> ServiceStore.Webhook {
        func invalid(_ field: String, _ message: String) -> ServiceError {
            ServiceError(.unprocessableContent, code: "invalid_webhook", message, field: field)
        }
        let known: Set = ["url", "secret", "requests", "events"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw invalid(unknown, "unknown field \"\(unknown)\"")
        }
        guard let url = object["url"] as? String, let parsed = URL(string: url),
            ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""), parsed.host?.isEmpty == false,
            url.utf8.count <= 2048
        else {
            throw invalid("url", "url must be an absolute http or https URL (at most 2,048 bytes)")
        }
        guard let secret = object["secret"] as? String, !secret.isEmpty, secret.utf8.count <= 1024 else {
            throw invalid("secret", "secret must be a non-empty string (at most 1,024 bytes); it signs every delivery")
        }
        func strings(_ field: String) throws -> [String]? {
            guard let value = object[field], !(value is NSNull) else { return nil }
            guard let list = value as? [String], !list.isEmpty, list.count <= 10_000 else {
                throw invalid(field, "\(field) must be a non-empty array of strings")
            }
            return list
        }
        let requests = try strings("requests")
        let events = try strings("events")
        let kinds = EventKind.allCases.map(\.rawValue)
        if let unknown = events?.first(where: { !kinds.contains($0) }) {
            throw invalid("events", "unknown event kind \"\(unknown)\" (one of \(kinds.joined(separator: ", ")))")
        }
        var generator = SystemRandomNumberGenerator()
        let id = "wh_" + lowercaseHex((0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return ServiceStore.Webhook(
            id: id, url: url, secret: secret, requests: requests, events: events,
            created: Date().timeIntervalSince1970)
    }

    static func summary(of webhook: ServiceStore.Webhook) -> WebhookSummary {
        let created = Timestamp(microseconds: Int64(webhook.created * 1000) * 1000).rfc3339
        return WebhookSummary(
            id: webhook.id, url: webhook.url, requests: webhook.requests, events: webhook.events, created: created,
            delivered: webhook.delivered, failed: webhook.failed, givenUp: webhook.givenUp, backlog: webhook.backlog)
    }

    /// A request's whole body, or a 413 past ``maximumBodyBytes``.
    static func collectBody(_ request: Request) async throws -> ByteBuffer {
        do {
            return try await request.body.collect(upTo: maximumBodyBytes)
        } catch {
            throw ServiceError(
                .contentTooLarge, code: "body_too_large", "the body is over \(maximumBodyBytes >> 20) MiB")
        }
    }

    /// A request's body as a JSON object: 415 for another content type (none is taken as JSON),
    /// 413 over 16 MiB, 400 for a body that is not JSON, 422 for JSON that is not an object (SPEC
    /// §11: valid JSON, invalid request), each saying what was expected.
    static func jsonObject(_ request: Request, what: String) async throws -> [String: Any] {
        guard let object = try await jsonValue(request, what: what) as? [String: Any] else {
            throw ServiceError(
                .unprocessableContent, code: "invalid_request", "the body must be a JSON object: \(what)")
        }
        return object
    }

    /// A JSON body of any kind, with the same content type and size checks.
    static func jsonValue(_ request: Request, what: String) async throws -> Any {
        if let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
            .lowercased(), type != "application/json", !type.hasSuffix("+json")
        {
            throw ServiceError(
                .unsupportedMediaType, code: "unsupported_media_type", "send \(what) as application/json (got \(type))")
        }
        let body = try await collectBody(request)
        guard
            let value = try? JSONSerialization.jsonObject(
                with: Data(body.readableBytesView), options: .fragmentsAllowed)
        else {
            throw ServiceError(.badRequest, code: "malformed", "the body must be JSON: \(what)")
        }
        return value
    }

    /// The device's standing for one request, as `GET /v1/devices/{id}` lists it.
    struct Standing: Encodable {
        var request: String
        var state: String
        /// Inside: when the stay began (as the engine knows it, whether an event told it or not).
        /// Outside: the time of the exit event that put the device there, if one did.
        var since: String?
        /// When an open streak towards the other side began.
        var changingSince: String?
        /// For a proximity request, the device of the pair.
        var other: String?
    }

    struct DeviceAnswer: Encodable {
        struct LastReading: Encodable {
            var time: String
            var lat: Double?
            var lon: Double?
        }
        var device: String
        var lastReading: LastReading?
        var requests: [Standing]
    }

    /// `GET /v1/devices/{id}`: the last reading and, per request, inside or outside and since when.
    static func addDeviceRoutes(to router: RouterGroup<ServiceContext>, engine: ServiceEngine, store: ServiceStore) {
        router.delete("v1/devices/:id") { _, context in
            let id = try pathID(context)
            let record: [String: Any] = ["op": "removeDevice", "devices": [id]]
            let line = Array(try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]))
            guard try await engine.controlIfKnownDevice(id, line) else {
                throw ServiceError(.notFound, code: "not_found", "no device \"\(id)\" has been read")
            }
            return try json(["removed": [id]])
        }
        router.get("v1/devices/:id") { _, context in
            let id = try pathID(context)
            guard let status = await engine.status(ofDevice: id, includingOutside: true) else {
                throw ServiceError(.notFound, code: "not_found", "no device \"\(id)\" has been read")
            }
            let pending = Set(await engine.pendingRequests().map(\.request.id))
            var crossings: [String: (kind: String, time: String?, other: String?)] = [:]
            for event in try store.lastCrossings(device: id) {
                let object = try? JSONSerialization.jsonObject(with: Data(event.json)) as? [String: Any]
                crossings[event.request] = (event.kind, object?["time"] as? String, object?["other"] as? String)
            }
            var standings = status.standings.map { standing in
                // The last crossing is kept per request: of a proximity request, that of one pair.
                let crossing = crossings[standing.requestID]
                let matches =
                    crossing?.kind == (standing.isInside ? "enter" : "exit") && crossing?.other == standing.other
                return Standing(
                    request: standing.requestID, state: standing.isInside ? "inside" : "outside",
                    since: standing.insideSince?.rfc3339 ?? (matches ? crossing?.time : nil),
                    changingSince: standing.changingSince?.rfc3339, other: standing.other)
            }
            // Requests the device last left (and that are still pending): outside since then.
            let listed = Set(standings.map(\.request))
            for (request, crossing) in crossings.sorted(by: { $0.key < $1.key })
            where crossing.kind == "exit" && !listed.contains(request) && pending.contains(request) {
                standings.append(
                    Standing(request: request, state: "outside", since: crossing.time, other: crossing.other))
            }
            let last = status.lastReadingTime.map {
                DeviceAnswer.LastReading(
                    time: $0.rfc3339, lat: status.lastPosition?.latitude, lon: status.lastPosition?.longitude)
            }
            return try json(DeviceAnswer(device: id, lastReading: last, requests: standings))
        }
    }
}
