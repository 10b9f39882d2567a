import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The HTTP face of the service (SPEC §11): routes, bearer-token auth and JSON errors.
enum ServiceRoutes {
    /// The largest body accepted.
    static let maximumBodyBytes = 16 << 20

    static func router(engine: ServiceEngine, store: ServiceStore, token: String) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: JSONErrors())
        router.add(middleware: BearerToken(token: Array(token.utf8)))
        router.get("healthz") { _, _ in try Self.json(["status": "ok"]) }
        router.get("readyz") { _, _ in try Self.json(["status": "ready"]) }
        router.post("v1/readings") { request, _ in
            let type = request.headers[.contentType]?.split(separator: ";").first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            guard type == "application/x-ndjson" || type == "application/json" || type == "text/plain" else {
                throw ServiceError(
                    .unsupportedMediaType, code: "unsupported_media_type",
                    "send readings as application/x-ndjson (got \(type ?? "no content type"))")
            }
            let buffer: ByteBuffer
            do {
                buffer = try await request.body.collect(upTo: maximumBodyBytes)
            } catch {
                throw ServiceError(
                    .contentTooLarge, code: "body_too_large", "the body is over \(maximumBodyBytes >> 20) MiB")
            }
            let key = request.headers[HTTPField.Name("Idempotency-Key")!]
            let (answer, _) = try await engine.ingest(Array(buffer.readableBytesView), idempotencyKey: key)
            return try Self.json(answer)
        }
        router.get("v1/events") { request, _ in
            let after = request.uri.queryParameters.get("after", as: Int.self) ?? 0
            let limit = min(max(request.uri.queryParameters.get("limit", as: Int.self) ?? 1000, 1), 10_000)
            let events = try store.events(after: after, limit: limit)
            var body = Array(#"{"events":["#.utf8)
            for (index, event) in events.enumerated() {
                if index > 0 { body.append(UInt8(ascii: ",")) }
                body += event.json
            }
            body += Array(#"],"next":\#(events.last?.seq ?? after)}"#.utf8)
            return Self.response(body, type: "application/json")
        }
        router.get("v1/export") { _, _ in
            var body: [UInt8] = []
            var position = 0
            while true {
                let entries = try store.journal(after: position, limit: 10_000)
                guard let last = entries.last else { break }
                for entry in entries {
                    body += entry.line
                    body.append(0x0A)
                }
                position = last.position
            }
            return Self.response(body, type: "application/x-ndjson")
        }
        return router
    }

    static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return response(Array(try encoder.encode(value)), type: "application/json")
    }

    static func response(_ bytes: [UInt8], type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: type],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// An error answered as SPEC §11's JSON: `{"error": {"code", "message", "line"?, "field"?}}`.
struct ServiceError: Error {
    var status: HTTPResponse.Status
    var code: String
    var message: String

    init(_ status: HTTPResponse.Status, code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    var response: Response {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
            }
            var error: Detail
        }
        let bytes = (try? JSONEncoder().encode(Body(error: .init(code: code, message: message)))).map(Array.init) ?? []
        return ServiceRoutes.response(bytes, type: "application/json", status: status)
    }
}

/// Turns every error into a JSON answer: the service's own, Hummingbird's (404 for an unknown
/// route, 405…) and anything else as a 500 whose detail goes to the log, not the client.
struct JSONErrors<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ServiceError {
            return error.response
        } catch let error as HTTPError {
            let code = error.status == .notFound ? "not_found" : "http_\(error.status.code)"
            return ServiceError(error.status, code: code, error.body ?? error.status.reasonPhrase).response
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            return ServiceError(.internalServerError, code: "internal", "the request failed; see the service's log")
                .response
        }
    }
}

/// `Authorization: Bearer <token>` on every path but the health checks, compared in constant time.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        if path == "/healthz" || path == "/readyz" { return try await next(request, context) }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            Self.constantTimeEqual(Array(header.utf8.dropFirst(7)), token)
        else {
            throw ServiceError(.unauthorized, code: "unauthorized", "send Authorization: Bearer <token>")
        }
        return try await next(request, context)
    }

    /// Equal bytes, in a time that depends only on the lengths.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
