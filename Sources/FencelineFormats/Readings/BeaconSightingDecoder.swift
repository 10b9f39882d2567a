import Fenceline

/// Decodes beacon sighting lines: `{"device", "time", "beacon": {uuid, major, minor, rssi, txPower}}`.
enum BeaconSightingDecoder {
    static func decode(_ line: UnsafeBufferPointer<UInt8>) throws -> Reading {
        let value = try JSONValue.parse(line)
        let sink = IssueSink()
        guard let fields = FieldReader(value, path: "", sink: sink) else {
            throw LineError(code: .malformed, message: "expected an object")
        }
        let device = fields.string("device", required: true)
        let time = fields.timestamp("time")
        if let issue = sink.issues.first { throw LineError(field: issue.path, message: issue.message) }
        guard let device, !device.isEmpty else {
            throw LineError(field: "device", message: "must be a non-empty string")
        }
        guard let time else { throw LineError(field: "time", message: "missing; give RFC 3339 or Unix seconds") }
        if fields.has("adv") {
            guard let hex = fields.string("adv"), let rssi = fields.number("rssi", required: true) else {
                throw LineError(
                    field: sink.issues.first?.path ?? "adv",
                    message: sink.issues.first?.message ?? "expected a hex string")
            }
            guard rssi.isFinite else { throw LineError(field: "rssi", message: "must be a finite number of dBm") }
            let decoded = try AdvertisementDecoder.decode(hex: hex)
            return .sighting(
                BeaconSighting(
                    device: device, time: time, beacon: decoded.identity, rssi: rssi, txPower: decoded.txPower))
        }
        guard let beacon = FieldReader(fields.object["beacon"], path: "beacon", sink: sink) else {
            throw LineError(field: "beacon", message: sink.issues.first?.message ?? "expected an object")
        }
        let uuid = beacon.string("uuid", required: true)
        let major = beacon.integer("major", required: true)
        let minor = beacon.integer("minor", required: true)
        let rssi = beacon.number("rssi", required: true) ?? fields.number("rssi")
        let txPower = beacon.number("txPower")
        if let issue = sink.issues.first { throw LineError(field: issue.path, message: issue.message) }
        guard let uuid, let major, let minor, let rssi else {
            throw LineError(field: "beacon", message: "incomplete sighting")
        }
        guard let normalized = BeaconIdentity.normalizedUUID(uuid) else {
            throw LineError(
                field: "beacon.uuid", message: "\"\(uuid)\" is not a UUID such as 2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")
        }
        guard (0...65_535).contains(major) else {
            throw LineError(field: "beacon.major", message: "must be in 0…65535 (got \(major))")
        }
        guard (0...65_535).contains(minor) else {
            throw LineError(field: "beacon.minor", message: "must be in 0…65535 (got \(minor))")
        }
        guard rssi.isFinite else { throw LineError(field: "beacon.rssi", message: "must be a finite number of dBm") }
        return .sighting(
            BeaconSighting(
                device: device, time: time, beacon: BeaconIdentity(uuid: normalized, major: major, minor: minor),
                rssi: rssi, txPower: txPower))
    }
}
