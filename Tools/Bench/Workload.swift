import Foundation

/// The benchmark workload of issue 5, generated from a seed so every run measures the same files.
///
/// - country100k: 100,000 fences over 270 × 310 km; city10k: 10,000 over 40 × 40 km. Half circles
///   (radius 50–500 m), half star-shaped polygons (8–64 vertices); 70 % of centres around 50
///   Gaussian hotspots, 30 % uniform.
/// - Readings: devices × steps at 1 Hz, random walks (walkers 1.4 m/s, bikes 5, cars 13; heading
///   jitter 15°), GPS noise with accuracy 3–20 m, interleaved by time as an ingest stream arrives.
struct Workload {
    struct Area {
        var south: Double
        var west: Double
        var heightKm: Double
        var widthKm: Double
        var hotspotSigma: Double

        var north: Double { south + heightKm * 1000 / metresPerDegree }
        var centerLatitude: Double { (south + north) / 2 }
        var metresPerDegreeEast: Double { metresPerDegree * cos(centerLatitude * .pi / 180) }
        var east: Double { west + widthKm * 1000 / metresPerDegreeEast }

        /// The Netherlands-sized area of country100k.
        static let country = Area(south: 50.75, west: 3.30, heightKm: 310, widthKm: 270, hotspotSigma: 6_000)
        /// The 40 × 40 km city of city10k.
        static let city = Area(south: 52.20, west: 4.60, heightKm: 40, widthKm: 40, hotspotSigma: 1_500)
    }

    static let metresPerDegree = 6_371_008.8 * Double.pi / 180

    var rng: SplitMix
    let area: Area
    var hotspots: [(Double, Double)] = []

    init(seed: UInt64, area: Area) {
        rng = SplitMix(state: seed)
        self.area = area
        hotspots = (0..<50).map { _ in (uniform(area.south, area.north), uniform(area.west, area.east)) }
    }

    mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low + (high - low) * Double(rng.next() >> 11) / Double(1 << 53)
    }

    mutating func gaussian() -> Double {
        let u = max(uniform(0, 1), 1e-300)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * uniform(0, 1))
    }

    /// A point: 70 % around a hotspot, 30 % uniform, kept inside the area.
    mutating func place() -> (Double, Double) {
        if uniform(0, 1) < 0.7 {
            let spot = hotspots[Int(rng.next() % UInt64(hotspots.count))]
            let lat = spot.0 + gaussian() * area.hotspotSigma / Workload.metresPerDegree
            let lon = spot.1 + gaussian() * area.hotspotSigma / area.metresPerDegreeEast
            return (min(max(lat, area.south), area.north), min(max(lon, area.west), area.east))
        }
        return (uniform(area.south, area.north), uniform(area.west, area.east))
    }

    /// Writes `count` fences as a catalog with default hysteresis (enter and exit notified).
    mutating func writeCatalog(count: Int, to path: String) throws {
        var text = "{\"requests\":[\n"
        text.reserveCapacity(count * 400)
        for index in 0..<count {
            let (lat, lon) = place()
            let radius = uniform(50, 500)
            if index > 0 { text += ",\n" }
            if index.isMultiple(of: 2) {
                text +=
                    "{\"id\":\"f\(index)\",\"trigger\":{\"type\":\"region\",\"center\":{\"lat\":\(format(lat)),\"lon\":\(format(lon))},\"radius\":\(format(radius, digits: 1))}}"
            } else {
                let vertices = 4 + 2 * Int(rng.next() % 29)  // 8…64, even
                let inner = radius * uniform(0.4, 0.8)
                let turn = uniform(0, 2 * .pi)
                var ring: [String] = []
                for vertex in 0..<vertices {
                    let angle = turn + 2 * .pi * Double(vertex) / Double(vertices)
                    let r = vertex.isMultiple(of: 2) ? radius : inner
                    let y = lat + r * sin(angle) / Workload.metresPerDegree
                    let x = lon + r * cos(angle) / (Workload.metresPerDegree * cos(lat * .pi / 180))
                    ring.append("[\(format(x)),\(format(y))]")
                }
                ring.append(ring[0])
                text +=
                    "{\"id\":\"f\(index)\",\"trigger\":{\"type\":\"region\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[\(ring.joined(separator: ","))]]}}}"
            }
        }
        text += "\n]}\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The layouts real feeds write readings in (issue 28), each written from the same readings.
    enum Layout: String, CaseIterable {
        /// `{"device","time","lat","lon","accuracy"}`, RFC 3339 times: what Fenceline writes.
        case canonical
        /// The same members, time first and device last.
        case reordered
        /// The canonical members and five more: speed, heading, altitude, battery and source.
        case extra
        /// `"time"` as Unix seconds with milliseconds.
        case unix
        /// CSV with a header, `device,time,lat,lon,accuracy`.
        case csv
        /// The canonical file, gzip-compressed.
        case gzip

        /// The file of this layout next to the canonical `base.ndjson`.
        func path(base: String) -> String {
            switch self {
            case .canonical: base + ".ndjson"
            case .reordered: base + ".reordered.ndjson"
            case .extra: base + ".extra.ndjson"
            case .unix: base + ".unix.ndjson"
            case .csv: base + ".csv"
            case .gzip: base + ".ndjson.gz"
            }
        }

        var title: String {
            switch self {
            case .canonical: "canonical NDJSON"
            case .reordered: "keys in another order"
            case .extra: "five extra fields"
            case .unix: "Unix seconds with ms"
            case .csv: "CSV"
            case .gzip: "canonical, gzip"
            }
        }
    }

    /// Writes `count` simple fences (issue 28's million): half circles of 50–500 m, half squares
    /// (4 vertices) of the same sizes, placed as ``writeCatalog(count:to:)`` places them.
    mutating func writeSimpleCatalog(count: Int, to path: String) throws {
        let handle = try FileHandleWriter(path: path)
        try handle.write("{\"requests\":[\n")
        try writeSimpleFences(count: count, firstIndex: 0, to: handle)
        try handle.write("\n]}\n")
        try handle.close()
    }

    /// Writes `count` simple fences over `tiles` areas of country100k's size side by side, five to
    /// a row, an equal share in each placed around its own hotspots. The first tile is country100k's
    /// area with its hotspots (seed 1, those of the country readings), so around the country
    /// readings the fences lie as densely as country100k's do: a rate against country100k's then
    /// measures what the catalog's size costs, not what more fences around each reading cost.
    static func writeTiledSimpleCatalog(count: Int, tiles: Int, to path: String) throws {
        let country = Area.country
        let (heightDegrees, widthDegrees) = (country.north - country.south, country.east - country.west)
        let handle = try FileHandleWriter(path: path)
        try handle.write("{\"requests\":[\n")
        for tile in 0..<tiles {
            var area = Area(
                south: country.south + Double(tile / 5) * heightDegrees,
                west: country.west + Double(tile % 5) * widthDegrees, heightKm: country.heightKm, widthKm: 0,
                hotspotSigma: country.hotspotSigma)
            area.widthKm = widthDegrees * area.metresPerDegreeEast / 1000
            var workload = Workload(seed: tile == 0 ? 1 : 1000 + UInt64(tile), area: area)
            let share = count / tiles + (tile < count % tiles ? 1 : 0)
            try workload.writeSimpleFences(
                count: share, firstIndex: tile * (count / tiles) + min(tile, count % tiles), to: handle)
        }
        try handle.write("\n]}\n")
        try handle.close()
    }

    /// Writes `count` simple fences as catalog entries, ids from `firstIndex` on.
    mutating func writeSimpleFences(count: Int, firstIndex: Int, to handle: FileHandleWriter) throws {
        for index in firstIndex..<firstIndex + count {
            let (lat, lon) = place()
            let radius = uniform(50, 500)
            var text = index > 0 ? ",\n" : ""
            if index.isMultiple(of: 2) {
                text +=
                    "{\"id\":\"f\(index)\",\"trigger\":{\"type\":\"region\",\"center\":{\"lat\":\(format(lat)),\"lon\":\(format(lon))},\"radius\":\(format(radius, digits: 1))}}"
            } else {
                let dy = radius / Workload.metresPerDegree
                let dx = radius / (Workload.metresPerDegree * cos(lat * .pi / 180))
                let (s, n, w, e) = (format(lat - dy), format(lat + dy), format(lon - dx), format(lon + dx))
                text +=
                    "{\"id\":\"f\(index)\",\"trigger\":{\"type\":\"region\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[[\(w),\(s)],[\(e),\(s)],[\(e),\(n)],[\(w),\(n)],[\(w),\(s)]]]}}}"
            }
            try handle.write(text)
        }
    }

    /// Writes `devices` × `steps` readings at 1 Hz, interleaved by time, to `base.ndjson` and, with
    /// `layouts`, the same readings in each of those layouts too.
    mutating func writeReadings(devices: Int, steps: Int, base: String, layouts: [Layout] = [.canonical]) throws {
        struct Walker {
            var name: String
            var phase: Int
            var north: Double  // metres from the area's south-west corner
            var east: Double
            var heading: Double
            var speed: Double
        }
        var walkers: [Walker] = (0..<devices).map { index in
            let (lat, lon) = place()
            let speed = [1.4, 5, 13][index % 3] * uniform(0.8, 1.2)
            return Walker(
                name: devices > 9_999 ? String(format: "dev-%07d", index) : String(format: "dev-%04d", index),
                phase: Int(rng.next() % 1000), north: (lat - area.south) * Workload.metresPerDegree,
                east: (lon - area.west) * area.metresPerDegreeEast, heading: uniform(0, 2 * .pi), speed: speed)
        }
        walkers.sort { $0.phase < $1.phase }
        let heightMetres = area.heightKm * 1000
        let widthMetres = area.widthKm * 1000
        var writers: [Layout: FileHandleWriter] = [:]
        for layout in layouts where layout != .gzip {
            writers[layout] = try FileHandleWriter(path: layout.path(base: base))
        }
        if writers[.canonical] == nil {
            writers[.canonical] = try FileHandleWriter(path: Layout.canonical.path(base: base))
        }
        try writers[.csv]?.write("device,time,lat,lon,accuracy\n")
        var line = ""
        for step in 0..<steps {
            for index in walkers.indices {
                var walker = walkers[index]
                if step > 0 {
                    walker.heading += gaussian() * 15 * .pi / 180
                    walker.north += walker.speed * cos(walker.heading)
                    walker.east += walker.speed * sin(walker.heading)
                    // Bounce off the edges of the area.
                    if walker.north < 0 || walker.north > heightMetres { walker.heading = .pi - walker.heading }
                    if walker.east < 0 || walker.east > widthMetres { walker.heading = -walker.heading }
                    walker.north = min(max(walker.north, 0), heightMetres)
                    walker.east = min(max(walker.east, 0), widthMetres)
                }
                walkers[index] = walker
                let accuracy = uniform(3, 20)
                let sigma = accuracy / 1.51
                let lat = area.south + (walker.north + gaussian() * sigma) / Workload.metresPerDegree
                let lon = area.west + (walker.east + gaussian() * sigma) / area.metresPerDegreeEast
                let time = Workload.time(step: step, milliseconds: walker.phase)
                let (latText, lonText, accuracyText) = (format(lat), format(lon), format(accuracy, digits: 1))
                for (layout, writer) in writers {
                    line.removeAll(keepingCapacity: true)
                    switch layout {
                    case .canonical, .gzip:
                        line +=
                            "{\"device\":\"\(walker.name)\",\"time\":\"\(time)\",\"lat\":\(latText),\"lon\":\(lonText),\"accuracy\":\(accuracyText)}\n"
                    case .reordered:
                        line +=
                            "{\"time\":\"\(time)\",\"lat\":\(latText),\"lon\":\(lonText),\"accuracy\":\(accuracyText),\"device\":\"\(walker.name)\"}\n"
                    case .extra:
                        let heading = (walker.heading * 180 / .pi).truncatingRemainder(dividingBy: 360)
                        line +=
                            "{\"device\":\"\(walker.name)\",\"time\":\"\(time)\",\"lat\":\(latText),\"lon\":\(lonText),\"accuracy\":\(accuracyText),\"speed\":\(format(walker.speed, digits: 2)),\"heading\":\(format(heading < 0 ? heading + 360 : heading, digits: 1)),\"altitude\":\(format(2 + walker.north.truncatingRemainder(dividingBy: 37), digits: 1)),\"battery\":\(100 - step % 100),\"source\":\"gps\"}\n"
                    case .unix:
                        line +=
                            "{\"device\":\"\(walker.name)\",\"time\":\(Workload.unixTime(step: step, milliseconds: walker.phase)),\"lat\":\(latText),\"lon\":\(lonText),\"accuracy\":\(accuracyText)}\n"
                    case .csv:
                        line += "\(walker.name),\(time),\(latText),\(lonText),\(accuracyText)\n"
                    }
                    try writer.write(line)
                }
            }
        }
        for writer in writers.values { try writer.close() }
        if layouts.contains(.gzip) {
            let gzip = Process()
            gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
            gzip.arguments = [
                "-c", "gzip -6 -c \"$0\" > \"$1\"", Layout.canonical.path(base: base), Layout.gzip.path(base: base),
            ]
            try gzip.run()
            gzip.waitUntilExit()
        }
    }

    /// 2026-03-02T08:00:00Z plus `step` seconds and `milliseconds`, as Unix seconds.
    static func unixTime(step: Int, milliseconds: Int) -> String {
        String(format: "%d.%03d", 1_772_438_400 + step, milliseconds)
    }

    /// 2026-03-02T08:00:00Z plus `step` seconds and `milliseconds`, as RFC 3339.
    static func time(step: Int, milliseconds: Int) -> String {
        let seconds = 8 * 3600 + step
        return String(
            format: "2026-03-%02dT%02d:%02d:%02d.%03dZ", 2 + seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60,
            seconds % 60, milliseconds)
    }

    func format(_ value: Double, digits: Int = 7) -> String {
        String(format: "%.\(digits)f", value)
    }
}

/// A deterministic generator: SplitMix64.
struct SplitMix {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Buffered writes of text to a file.
final class FileHandleWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(path: String) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot write \(path)"])
        }
        self.handle = handle
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        try handle.close()
    }
}
