import Foundation

/// Point and box queries: a probe of the occupied levels' cells, packed members tested eight
/// boxes per step, and the overlay.
extension SpatialIndex {
    /// Appends the slots whose boxes hold the point. A slot split at ±180° can appear twice when the
    /// point is on the seam, so callers deduplicate.
    func query(latitude: Double, longitude: Double, into result: inout [Int32]) {
        var clearance = 0.0
        probe(latitude: latitude, longitude: longitude, into: &result, clearance: &clearance, measuring: false)
    }

    /// Like ``query(latitude:longitude:into:)``, and also lowers `clearance` to a lower bound of
    /// the metres from the point to any box that does not hold it, or to the edge of a probed cell
    /// (beyond which other boxes may start), less what rounding points to floats can cost: any
    /// point closer than that gets no slot this one does not.
    func query(latitude: Double, longitude: Double, into result: inout [Int32], clearance: inout Double) {
        probe(latitude: latitude, longitude: longitude, into: &result, clearance: &clearance, measuring: true)
    }

    @inline(__always)
    fileprivate func probe(
        latitude: Double, longitude: Double, into result: inout [Int32], clearance: inout Double, measuring: Bool
    ) {
        assert(unpacked == 0, "rebuild() must follow inserts with packingLater")
        assert(packedSlots.baseAddress == slots.withUnsafeBufferPointer { $0.baseAddress }, "renewReaders() missed")
        assert(packedEdges.baseAddress == edges.withUnsafeBufferPointer { $0.baseAddress }, "renewReaders() missed")
        let lat = Float(latitude)
        let lon = Float(longitude)
        // Metres per degree, lower bounds within a kilometre of the point (the longitude scale at
        // the most poleward latitude that near).
        let metresPerDegree = Earth.metresPerDegree * 0.999
        let cosine = cos(min(89.0, abs(latitude) + 0.02) * .pi / 180)
        if measuring && abs(latitude) > 85 { clearance = 0 }
        @inline(__always) func boxDistance(_ member: Member) -> Double {
            let dLat = max(0, Double(member.south) - latitude, latitude - Double(member.north))
            let dLon = max(0, Double(member.west) - longitude, longitude - Double(member.east))
            return max(dLat * metresPerDegree, dLon * metresPerDegree * cosine)
        }
        @inline(__always) func edgeDistance(size: Double) -> Double {
            let x = (longitude + 180) / size
            let y = (latitude + 90) / size
            let dx = min(x - x.rounded(.down), x.rounded(.down) + 1 - x) * size
            let dy = min(y - y.rounded(.down), y.rounded(.down) + 1 - y) * size
            return min(dy * metresPerDegree, dx * metresPerDegree * cosine)
        }
        // The key of the point's cell at `level`; while measuring, the clearance is also lowered
        // to the distance to that cell's edge.
        @inline(__always) func cellKey(level: Int) -> Int64 {
            let size = Self.cellSize(level: level)
            if measuring { clearance = min(clearance, edgeDistance(size: size)) }
            return Self.key(
                level: level, column: Self.column(longitude, size: size), row: Self.row(latitude, size: size))
        }
        // Box distances are taken in floats, eight members at a time. Points are rounded to floats
        // before the box tests, this one and any later one, so the clearance gives up `rounding`:
        // two float steps at this point's magnitude (each rounding moves a point half a step).
        let latitudeScale = Float(metresPerDegree)
        let longitudeScale = Float(metresPerDegree * cosine)
        let rounding =
            2 * max(Double(lat.ulp) * metresPerDegree, Double(lon.ulp) * metresPerDegree * cosine)
        var nearest = Float.infinity
        let total = packedSlots.count
        let slots = packedSlots
        if packedLevels != 0, let edges = packedEdges.baseAddress {
            let souths = edges
            let norths = souths + total
            let wests = norths + total
            let easts = wests + total
            @inline(__always) func load(_ column: UnsafePointer<Float>, _ index: Int) -> SIMD8<Float> {
                UnsafeRawPointer(column + index).loadUnaligned(as: SIMD8<Float>.self)
            }
            let lat8 = SIMD8<Float>(repeating: lat)
            let lon8 = SIMD8<Float>(repeating: lon)
            var nearest8 = SIMD8<Float>(repeating: .infinity)
            var pending = packedLevels
            while pending != 0 {
                let level = pending.trailingZeroBitCount
                pending &= pending - 1
                guard let run = packedRun(cellKey(level: level), level: level) else { continue }
                // While loops: a for-in over a Range showed unspecialised in profiles.
                var index = run.lowerBound
                while index + 8 <= run.upperBound {
                    let south = load(souths, index), north = load(norths, index)
                    let west = load(wests, index), east = load(easts, index)
                    let holds = (south .<= lat8) .& (lat8 .<= north) .& (west .<= lon8) .& (lon8 .<= east)
                    if any(holds) {
                        for lane in 0..<8 where holds[lane] { result.append(slots[index + lane]) }
                    }
                    if measuring {
                        // Lane-wise max and min by compare and select: the standard library's
                        // pointwiseMax is not inlined for SIMD8 and cost more than the rest.
                        @inline(__always) func larger(_ a: SIMD8<Float>, _ b: SIMD8<Float>) -> SIMD8<Float> {
                            a.replacing(with: b, where: a .< b)
                        }
                        let dLat = larger(larger(south - lat8, lat8 - north), .zero) * latitudeScale
                        let dLon = larger(larger(west - lon8, lon8 - east), .zero) * longitudeScale
                        let distance = larger(dLat, dLon).replacing(with: .infinity, where: holds)
                        nearest8 = nearest8.replacing(with: distance, where: distance .< nearest8)
                    }
                    index += 8
                }
                while index < run.upperBound {
                    let south = souths[index], north = norths[index], west = wests[index], east = easts[index]
                    if south <= lat && lat <= north && west <= lon && lon <= east {
                        result.append(slots[index])
                    } else if measuring {
                        let dLat = max(0, south - lat, lat - north) * latitudeScale
                        let dLon = max(0, west - lon, lon - east) * longitudeScale
                        nearest = min(nearest, max(dLat, dLon))
                    }
                    index += 1
                }
            }
            // Halved twice by compare and select: the standard library's min() over the lanes is
            // a generic call here.
            let four = nearest8.lowHalf.replacing(with: nearest8.highHalf, where: nearest8.highHalf .< nearest8.lowHalf)
            let two = four.lowHalf.replacing(with: four.highHalf, where: four.highHalf .< four.lowHalf)
            nearest = min(nearest, two[0], two[1])
        }
        if measuring && nearest < .infinity {
            // Float subtraction and scaling err by a few parts in 10^7 of the distance.
            clearance = min(clearance, Double(nearest) * (1 - 1e-6) - rounding)
        }
        guard overlayCount > 0 else { return }
        var pending = overlayLevels
        while pending != 0 {
            let level = pending.trailingZeroBitCount
            pending &= pending - 1
            for member in overlay[cellKey(level: level)] ?? [] {
                if member.contains(latitude: lat, longitude: lon) {
                    result.append(member.slot)
                } else if measuring {
                    clearance = min(clearance, boxDistance(member) - rounding)
                }
            }
        }
    }

    /// Appends the slots whose boxes may intersect `bounds` (unwrapped degrees); may repeat slots.
    func query(bounds: GeoBounds, into result: inout [Int32]) {
        assert(unpacked == 0, "rebuild() must follow inserts with packingLater")
        for part in bounds.normalizedParts {
            for level in 0..<Self.levelCount where (packedLevels | overlayLevels) & (1 << UInt32(level)) != 0 {
                let size = Self.cellSize(level: level)
                let rows = Self.row(part.south, size: size)...Self.row(part.north, size: size)
                let columns = Self.column(part.west, size: size)...Self.column(part.east, size: size)
                if rows.count * columns.count > 4 * count + 64 {
                    // Wider than the whole index: test every box of the level instead of every cell.
                    for index in slotLevel.indices
                    where slotLevel[index] >= 0 && max(Int(slotLevel[index]), floorLevel) == level {
                        if boxes(of: index).contains(where: {
                            $0.south <= part.north && part.south <= $0.north && $0.west <= part.east
                                && part.west <= $0.east
                        }) {
                            result.append(Int32(index))
                        }
                    }
                    continue
                }
                for row in rows {
                    for column in columns {
                        let key = Self.key(level: level, column: column, row: row)
                        forEachMember(at: key, level: level) { member in
                            if member.intersects(part) { result.append(member.slot) }
                        }
                    }
                }
            }
        }
    }

    fileprivate func forEachMember(at key: Int64, level: Int, _ body: (Member) -> Void) {
        if let run = packedRun(key, level: level) {
            let total = slots.count
            for index in run where slots[index] >= 0 {
                body(
                    Member(
                        slot: slots[index], south: edges[index], north: edges[total + index],
                        west: edges[2 * total + index], east: edges[3 * total + index]))
            }
        }
        for member in overlay[key] ?? [] { body(member) }
    }
}
