import Fenceline

/// The fields of a position reading as a decoder collects them (NDJSON members, CSV columns),
/// checked into a fix in one place: required fields, ranges, accuracy.
struct FixFields {
    var device: String?
    var time: Timestamp?
    var lat: Double?
    var lon: Double?
    var accuracy: Double?
    var speed: Double?
    var heading: Double?
    var altitude: Double?

    /// The fix, or the error naming the first missing or out-of-range field.
    func makeReading() throws(LineError) -> Reading {
        guard let device else { throw LineError(field: "device", message: "missing; every reading names its device") }
        guard !device.isEmpty else { throw LineError(field: "device", message: "must not be empty") }
        guard let time else { throw LineError(field: "time", message: "missing; give RFC 3339 or Unix seconds") }
        guard let lat else { throw LineError(field: "lat", message: "missing") }
        guard let lon else { throw LineError(field: "lon", message: "missing") }
        guard (-90.0...90.0).contains(lat) else {
            throw LineError(field: "lat", message: "\(lat) is out of range [-90, 90]")
        }
        guard (-180.0...180.0).contains(lon) else {
            throw LineError(field: "lon", message: "\(lon) is out of range [-180, 180] (longitudes are not normalised)")
        }
        if let accuracy, !(accuracy >= 0 && accuracy.isFinite) {
            throw LineError(field: "accuracy", message: "must be a finite number of metres ≥ 0 (got \(accuracy))")
        }
        return .fix(
            Fix(
                device: device, time: time, coordinate: Coordinate(latitude: lat, longitude: lon), accuracy: accuracy,
                speed: speed, heading: heading, altitude: altitude))
    }
}
