import Crypto
import Fenceline
import Foundation
import Hummingbird
import HummingbirdAuth

extension ServiceRoutes {
    /// The live map's Content-Security-Policy: everything the page needs is in it, so only its
    /// own inline script and style run (by their SHA-256), it talks only to this service, and
    /// it may not be framed.
    static let mapPolicy: String = {
        func hash(between open: String, and close: String) -> String {
            let page = String(decoding: PackageResources.map_html, as: UTF8.self)
            guard let start = page.range(of: open)?.upperBound,
                let end = page.range(of: close, range: start..<page.endIndex)
            else { return "'none'" }
            return "'sha256-" + Data(SHA256.hash(data: Array(page[start..<end.lowerBound].utf8))).base64EncodedString()
                + "'"
        }
        return "default-src 'none'; script-src \(hash(between: "<script>", and: "</script>")); "
            + "style-src \(hash(between: "<style>", and: "</style>")); connect-src 'self'; base-uri 'none'; "
            + "form-action 'none'; frame-ancestors 'none'"
    }()

    /// The live map (`GET /`, no token: the page asks for it and sends it in headers only) and
    /// what it reads: the fences (`GET /v1/fences`) and every device's last position
    /// (`GET /v1/devices`); events come from the event stream.
    static func addMapRoutes(
        page router: Router<ServiceContext>, api: RouterGroup<ServiceContext>, engine: ServiceEngine
    ) {
        router.get("/") { _, _ in
            var answer = response(PackageResources.map_html, type: "text/html; charset=utf-8")
            answer.headers[.init("Content-Security-Policy")!] = mapPolicy
            answer.headers[.init("Referrer-Policy")!] = "no-referrer"
            return answer
        }
        api.get("v1/fences") { _, _ in
            let features: [[String: Any]] = await engine.fences().map { fence in
                var properties: [String: Any] = ["request": fence.id]
                let geometry: [String: Any]
                switch fence.geometry {
                case .circle(let center, let radius):
                    geometry = ["type": "Point", "coordinates": [center.longitude, center.latitude]]
                    properties["radius"] = radius
                case .polygons(let parts):
                    let rings = parts.map { $0.map { $0.map { [$0.longitude, $0.latitude] } } }
                    geometry =
                        rings.count == 1
                        ? ["type": "Polygon", "coordinates": rings[0]] : ["type": "MultiPolygon", "coordinates": rings]
                case .corridor(let path, let width):
                    geometry = ["type": "LineString", "coordinates": path.map { [$0.longitude, $0.latitude] }]
                    properties["corridor"] = width
                }
                return ["type": "Feature", "id": fence.id, "properties": properties, "geometry": geometry]
            }
            let collection: [String: Any] = ["type": "FeatureCollection", "features": features]
            return response(
                Array(try JSONSerialization.data(withJSONObject: collection, options: [.sortedKeys])),
                type: "application/geo+json")
        }
        api.get("v1/devices") { request, _ in
            let limit = try integer(request, "limit", default: 10_000, in: 1...100_000)
            let (devices, total) = await engine.devices(limit: limit)
            struct Listed: Encodable {
                var device: String
                var time: String?
                var lat: Double?
                var lon: Double?
                var inside: [String]
            }
            struct Answer: Encodable {
                var devices: [Listed]
                var total: Int
            }
            let listed = devices.map { status in
                Listed(
                    device: status.device, time: status.lastReadingTime?.rfc3339, lat: status.lastPosition?.latitude,
                    lon: status.lastPosition?.longitude,
                    inside: status.standings.filter(\.isInside).map(\.requestID))
            }
            return try json(Answer(devices: listed, total: total))
        }
    }
}
