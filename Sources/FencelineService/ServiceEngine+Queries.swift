import Fenceline
import FencelineFormats

/// What the routes read of the engine: requests, devices, fences and delivered notifications.
extension ServiceEngine {
    /// Whether `id` is a pending request (one added before the first reading included).
    func hasRequest(_ id: String) -> Bool {
        engine.isPending(id)
    }

    /// The pending request `id` and its next trigger date, or `nil`.
    func pendingRequest(_ id: String) -> (request: NotificationRequest, next: Timestamp?)? {
        engine.pendingRequest(withIdentifier: id).map { ($0, engine.nextTriggerDate(forRequest: id)) }
    }

    /// The pending requests, as `GET /v1/requests` lists them.
    func pendingRequests() -> [(request: NotificationRequest, next: Timestamp?)] {
        engine.pendingRequests.map { ($0, engine.nextTriggerDate(forRequest: $0.id)) }
    }

    /// What the engine knows of a device, with the time of the last event of each of its standings.
    func status(ofDevice device: String, includingOutside: Bool = false) -> DeviceStatus? {
        engine.status(ofDevice: device, includingOutside: includingOutside)
    }

    /// The first `limit` devices (in the order first read) with what the engine knows of each.
    func devices(limit: Int) -> (devices: [DeviceStatus], total: Int) {
        let names = engine.deviceNames
        return (names.prefix(limit).compactMap { engine.status(ofDevice: $0) }, names.count)
    }

    /// The fences of the pending region requests, for the live map.
    func fences() -> [(id: String, geometry: RegionGeometry)] {
        engine.pendingRequests.compactMap { request in
            guard case .region(let region) = request.trigger else { return nil }
            return (request.id, region.geometry)
        }
    }

    /// The delivered notifications, newest first, of one device or all.
    func delivered(device: String?) -> [Event] {
        engine.deliveredNotifications.filter { device == nil || $0.device == device }
    }
}
