import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore

/// `bytes` in lowercase hexadecimal, two digits each: signatures, tokens and ids.
func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    // Written out: String(format:) runs a Foundation formatter per byte, on every delivery.
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}

/// An error answered as SPEC §11's JSON: `{"error": {"code", "message", "line"?, "field"?}}`.
struct ServiceError: Error {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var line: Int?
    var field: String?

    init(_ status: HTTPResponse.Status, code: String, _ message: String, line: Int? = nil, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.line = line
        self.field = field
    }

    var response: Response {
        struct Body: Encodable {
            struct Detail: Encodable {
                var code: String
                var message: String
                var line: Int?
                var field: String?
            }
            var error: Detail
        }
        let body = Body(error: .init(code: code, message: message, line: line, field: field))
        // Sorted, as every other answer: Foundation's encoder gives a keyed container's members
        // in no fixed order otherwise.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = (try? encoder.encode(body)).map(Array.init) ?? []
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
        } catch let error as HTTPError where error.status == .unauthorized {
            // RFC 9110 §11.6.1: a 401 names the scheme a client is to answer with.
            var response = ServiceError(.unauthorized, code: "unauthorized", "send Authorization: Bearer <token>")
                .response
            response.headers[.wwwAuthenticate] = #"Bearer realm="fenceline""#
            return response
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

/// Who a request comes from: a holder of the service's token (there is one kind of client).
struct ServiceClient: Sendable {}

/// The request context of every route: Hummingbird's, with the authenticated client.
typealias ServiceContext = BasicAuthRequestContext<ServiceClient>

/// `Authorization: Bearer <token>`, the scheme in any case. The token is compared through
/// SHA-256 digests, whose equality swift-crypto checks in constant time, so neither the token's
/// bytes nor its length show in the answer's timing; it is never logged.
struct TokenAuthenticator: AuthenticatorMiddleware {
    typealias Context = ServiceContext
    let digest: [UInt8]

    init(token: String) {
        digest = Array(SHA256.hash(data: Array(token.utf8)))
    }

    func authenticate(request: Request, context: Context) async throws -> ServiceClient? {
        guard let token = Self.bearerToken(request.headers[.authorization]) else { return nil }
        return SHA256.hash(data: Array(token.utf8)) == digest ? ServiceClient() : nil
    }

    /// The token of `Authorization: Bearer <token>`, its scheme matched in any case (RFC 9110
    /// §11.1; hummingbird-auth's reader takes `Bearer` only, and clients send `bearer` too).
    static func bearerToken(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}

/// A 405 with `Allow` for a path that exists with other methods (Hummingbird answers 404 there),
/// so a client learns which methods a path takes.
struct MethodNotAllowed<Context: RequestContext>: RouterMiddleware {
    /// Each route's path components (`{name}`, as Hummingbird describes a capture, matches any
    /// one component) and methods.
    let routes: [(components: [Substring], methods: [String])]

    init(routes: [(path: String, method: String)]) {
        var table: [String: [String]] = [:]
        for route in routes {
            table[route.path, default: []].append(route.method)
            // The router answers HEAD wherever it answers GET.
            if route.method == "GET" { table[route.path, default: []].append("HEAD") }
        }
        self.routes = table.keys.sorted().map { ($0.split(separator: "/"), table[$0]!.sorted()) }
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let components = request.uri.path.split(separator: "/")
            let methods = routes.filter { route in
                route.components.count == components.count
                    && zip(route.components, components).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
            }.flatMap(\.methods)
            guard !methods.isEmpty, !methods.contains(request.method.rawValue) else { throw error }
            var answer = ServiceError(
                .methodNotAllowed, code: "method_not_allowed",
                "\(request.method.rawValue) is not allowed here; use \(methods.joined(separator: ", "))"
            ).response
            answer.headers[.allow] = methods.joined(separator: ", ")
            return answer
        }
    }
}

/// While the engine is recovered: any path but `/healthz` and `/readyz` is a 503 `starting`
/// (401 first without the token, but for the map page, which asks for it itself).
struct Starting: RouterMiddleware {
    typealias Context = ServiceContext
    let authenticator: TokenAuthenticator

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        if path == "/healthz" || path == "/readyz" { return try await next(request, context) }
        if path != "/", try await authenticator.authenticate(request: request, context: context) == nil {
            throw HTTPError(.unauthorized)
        }
        var response = ServiceError(
            .serviceUnavailable, code: "starting",
            "the service is recovering its state; retry once GET /readyz answers 200"
        ).response
        response.headers[.retryAfter] = "1"
        return response
    }
}
