public import Fenceline

/// Readings as NDJSON in the normalised form of SPEC §3.1 (`fenceline readings`): one object per
/// fix or sighting, keys in a fixed order, times in UTC with as many fractional digits as they
/// carry (milliseconds, or microseconds when finer), numbers in their shortest round-trip form.
///
/// ```json
/// {"device":"car","time":"2020-12-18T06:15:50Z","lat":45.269041,"lon":13.715738,"altitude":254.9}
/// {"device":"gw-2","time":"2026-03-02T08:00:00.250Z","beacon":{"uuid":"…","major":1,"minor":7,"rssi":-67,"txPower":-59}}
/// ```
public enum ReadingEncoder {
    /// Appends `reading` as one line; control records are not readings and write nothing
    /// (returns `false` for them).
    @discardableResult
    public static func encode(_ reading: Reading, into bytes: inout [UInt8]) -> Bool {
        var writer = JSONWriter()
        swap(&writer.bytes, &bytes)
        defer { swap(&writer.bytes, &bytes) }
        // Every reading opens with its device and time.
        func begin(device: String, time: Timestamp) {
            writer.raw("{")
            writer.key("device", first: true)
            writer.string(device)
            writer.key("time")
            writer.string(preciseRFC3339(time))
        }
        switch reading {
        case .fix(let fix):
            begin(device: fix.device, time: fix.time)
            writer.key("lat")
            writer.number(fix.coordinate.latitude)
            writer.key("lon")
            writer.number(fix.coordinate.longitude)
            for (name, value) in [
                ("accuracy", fix.accuracy), ("speed", fix.speed), ("heading", fix.heading), ("altitude", fix.altitude),
            ] {
                guard let value else { continue }
                writer.raw(",\"\(name)\":")
                writer.number(value)
            }
            writer.raw("}\n")
            return true
        case .sighting(let sighting):
            begin(device: sighting.device, time: sighting.time)
            writer.key("beacon")
            writer.raw("{")
            writer.key("uuid", first: true)
            writer.string(sighting.beacon.uuid)
            writer.key("major")
            writer.raw(String(sighting.beacon.major))
            writer.key("minor")
            writer.raw(String(sighting.beacon.minor))
            writer.key("rssi")
            writer.number(sighting.rssi)
            if let txPower = sighting.txPower {
                writer.key("txPower")
                writer.number(txPower)
            }
            writer.raw("}}\n")
            return true
        case .control:
            return false
        }
    }

    /// RFC 3339 in UTC keeping sub-millisecond digits when the time has them.
    static func preciseRFC3339(_ time: Timestamp) -> String {
        let text = time.rfc3339
        let micros = (time.microseconds % 1_000_000 + 1_000_000) % 1_000_000
        guard micros % 1000 != 0 else { return text }
        let extra = String(micros % 1000)
        return String(text.dropLast()) + String(repeating: "0", count: 3 - extra.count) + extra + "Z"
    }
}
