import Fenceline

/// Decodes beacon sighting lines: `{"device", "time", "beacon": {uuid, major, minor, rssi, txPower}}`.
enum BeaconSightingDecoder {
    /// Received power is negative dBm; 0 and 127 are the "no reading" values SPEC §6 ignores, any
    /// other positive value is impossible (a receiver glitch) and makes the line bad input.
    static func checkRSSI(_ rssi: Double, field: String) throws(LineError) {
        guard rssi.isFinite else { throw LineError(field: field, message: "must be a finite number of dBm") }
        // Below -200 dBm no receiver reports anything; such a value is a decoding error upstream.
        guard rssi >= -200 else {
            throw LineError(field: field, message: "\(rssi) dBm is below any receiver's floor; expected -200…0")
        }
        guard rssi <= 0 || rssi == 127 else {
            throw LineError(
                field: field,
                message:
                    "\(rssi) dBm is impossible for a received signal; expected a negative value (0 and 127 mean no reading)"
            )
        }
    }

    /// A measured power at 1 m is negative dBm, as the catalog's `txPower` must be; whether it
    /// came as a field or inside an advertisement frame.
    static func checkTxPower(_ txPower: Double?, field: String) throws(LineError) {
        guard let txPower, !(txPower.isFinite && txPower < 0 && txPower >= -200) else { return }
        throw LineError(
            field: field,
            message: "\(txPower) dBm cannot be a beacon's measured power at 1 m; expected -200…0, exclusive of 0")
    }

    static func decode(_ line: UnsafeBufferPointer<UInt8>) throws -> Reading {
        let tape = try JSONTape.parse(line)
        defer { withExtendedLifetime(tape) {} }  // refs do not keep their tape alive
        let sink = IssueSink()
        guard let fields = FieldReader(tape.root, path: "", sink: sink) else {
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
            try checkRSSI(rssi, field: "rssi")
            let decoded = try AdvertisementDecoder.decode(hex: hex)
            return .sighting(
                BeaconSighting(
                    device: device, time: time, beacon: decoded.identity, rssi: rssi, txPower: decoded.txPower))
        }
        guard let beacon = FieldReader(fields["beacon"], path: "beacon", sink: sink) else {
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
        try checkRSSI(rssi, field: "beacon.rssi")
        try checkTxPower(txPower, field: "beacon.txPower")
        return .sighting(
            BeaconSighting(
                device: device, time: time, beacon: BeaconIdentity(uuid: normalized, major: major, minor: minor),
                rssi: rssi, txPower: txPower))
    }
}
