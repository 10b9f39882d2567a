import Foundation

/// Smooths the RSSI of one concrete beacon as heard by one device for one request (SPEC §6).
///
/// `average`: the mean of the samples strictly younger than the window, dropping ⌊n/10⌋+1 samples
/// from each end when n > 2 (AltBeacon's running-average filter). `arma`: `x ← x − c·(x − rssi)`
/// from the first sample. Both in double precision, so small steps are never rounded away.
struct RSSISmoother {
    private var samples: [(time: Timestamp, rssi: Double)] = []
    private var arma: Double?
    /// When the last sample was taken.
    private(set) var lastSample: Timestamp?

    /// Adds a sample and returns the smoothed RSSI.
    mutating func add(_ rssi: Double, at time: Timestamp, filter: RSSIFilter, window: TimeSpan) -> Double {
        lastSample = time
        switch filter {
        case .arma(let coefficient):
            let next = arma.map { $0 - coefficient * ($0 - rssi) } ?? rssi
            arma = next
            return next
        case .average:
            let horizon = time.advanced(by: TimeSpan(microseconds: -window.microseconds))
            samples.removeAll { $0.time <= horizon }
            samples.append((time, rssi))
            let count = samples.count
            guard count > 2 else { return samples.reduce(0) { $0 + $1.rssi } / Double(count) }
            let trim = count / 10 + 1
            let sorted = samples.map(\.rssi).sorted()
            let kept = sorted[trim..<(count - trim)]
            return kept.reduce(0, +) / Double(kept.count)
        }
    }

    /// Drops every sample, keeping when the last was taken: the next sample starts a new average.
    mutating func restart() {
        samples.removeAll()
        arma = nil
    }

    /// Whether every sample has left the window by `time` (ARMA state never expires).
    func isExpired(at time: Timestamp, filter: RSSIFilter, window: TimeSpan) -> Bool {
        guard case .average = filter, let lastSample else { return false }
        return lastSample <= time.advanced(by: TimeSpan(microseconds: -window.microseconds))
    }
}

extension DistanceModel {
    /// Metres for a smoothed RSSI and a calibrated power at 1 m: `ratio^10` below 1, else the curve.
    public func distance(rssi: Double, txPower: Double) -> Double {
        let ratio = rssi / txPower
        if ratio < 1 { return pow(ratio, 10) }
        return c1 * pow(ratio, c2) + c3
    }
}

extension Proximity {
    /// The class of `distance`, keeping `previous` unless the distance leaves it decisively:
    /// nearer classes are taken at their plain boundaries (0.5 m, 3 m), farther ones only once the
    /// distance reaches 1.1 × the boundary (0.55 m, 3.3 m). The first sample has no band.
    public static func classify(distance: Double, previous: Proximity?) -> Proximity {
        let plain = plain(distance: distance)
        guard let previous, plain > previous else { return plain }
        // Farther than `previous` only from its band edge on, and past near's edge, far.
        guard let edge = previous.bandEdge, distance >= edge else { return previous }
        return distance >= Proximity.near.bandEdge! ? .far : .near
    }

    /// The class of `distance` at the plain boundaries (0.5 m, 3 m), without the band.
    public static func plain(distance: Double) -> Proximity {
        distance < 0.5 ? .immediate : (distance < 3 ? .near : .far)
    }

    /// The distance from which a device held in this class by the band moves to a farther one
    /// (1.1 × the boundary), `nil` for the farthest class.
    public var bandEdge: Double? {
        switch self {
        case .immediate: 0.55
        case .near: 3.3
        case .far: nil
        }
    }
}

extension RSSISmoother {
    /// Writes the samples, the ARMA value and the last sample's time to a checkpoint.
    func write(to writer: inout CheckpointWriter) {
        writer.write(each: samples) { writer, sample in
            writer.write(sample.time)
            writer.write(sample.rssi)
        }
        writer.write(arma) { $0.write($1) }
        writer.write(lastSample) { $0.write($1) }
    }

    /// A smoother as ``write(to:)`` wrote it.
    init(from reader: inout CheckpointReader) throws {
        samples = try reader.array(typicalSize: 16) { reader in
            (try reader.timestamp(), try reader.double())
        }
        arma = try reader.optional { try $0.double() }
        lastSample = try reader.optional { try $0.timestamp() }
    }
}
