import Fenceline
import Foundation
import Hummingbird
import HummingbirdAuth

extension ServiceRoutes {
    /// The live map (`GET /`, no token: the page asks for it and sends it in headers only) and
    /// what it reads: the fences (`GET /v1/fences`) and every device's last position
    /// (`GET /v1/devices`); events come from the event stream.
    static func addMapRoutes(
        page router: Router<ServiceContext>, api: RouterGroup<ServiceContext>, engine: ServiceEngine
    ) {
        router.get("/") { _, _ in
            var answer = response(PackageResources.map_html, type: "text/html; charset=utf-8")
            // Everything the page needs is in it: nothing else may load, nor may it be framed.
            answer.headers[.init("Content-Security-Policy")!] =
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
                + "img-src 'self' data:; frame-ancestors 'none'"
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
