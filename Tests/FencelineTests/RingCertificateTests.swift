import Foundation
import GEOSBridge
import TestSupport
import Testing

@testable import Fenceline

/// The shortcut past GEOS validity must never call a ring valid that GEOS calls invalid.
@Suite struct RingCertificateTests {
    let context = GEOSContext()

    func geosValid(_ ring: [PlanarPoint]) throws -> Bool {
        try context.makePolygon(rings: [ring]).invalidityReason() == nil
    }

    func closed(_ points: [PlanarPoint]) -> [PlanarPoint] { points + [points[0]] }

    /// A star around (x, y): alternating radii, so concave, and simple.
    func star(_ generator: inout SplitMix, vertices: Int, x: Double = 5.3, y: Double = 52.1) -> [PlanarPoint] {
        closed(
            (0..<vertices).map { index in
                let angle = Double(index) / Double(vertices) * 2 * .pi
                let radius = Double.random(in: 0.0004...0.004, using: &generator)
                return PlanarPoint(x: x + radius * cos(angle) * 1.6, y: y + radius * sin(angle))
            })
    }

    /// Rings certified and rings GEOS refuses; a ring certified that GEOS refuses is an issue.
    struct Tally {
        var certified = 0
        var refusedByGEOS = 0

        mutating func add(_ ring: [PlanarPoint], geosValid: ([PlanarPoint]) throws -> Bool) throws {
            let valid = try geosValid(ring)
            if !valid { refusedByGEOS += 1 }
            if RingCertificate.certifiesSimple(ring) {
                certified += 1
                #expect(valid, "certified a ring GEOS refuses: \(ring)")
            }
        }
    }

    @Test func starsAreCertifiedAndGEOSAgrees() throws {
        var generator = SplitMix(state: 21)
        for vertices in [3, 4, 8, 17, 36, 64, 200] {
            for _ in 0..<20 {
                let ring = star(&generator, vertices: vertices)
                #expect(RingCertificate.certifiesSimple(ring))
                #expect(try geosValid(ring))
            }
        }
    }

    @Test func randomRingsAreNeverCertifiedWhenGEOSRefusesThem() throws {
        var generator = SplitMix(state: 5)
        var tally = Tally()
        for round in 0..<3000 {
            let count = Int.random(in: 3...12, using: &generator)
            // Coarse grids make touching vertices, collinear edges and repeated points common.
            let grid = round.isMultiple(of: 2) ? 4.0 : 1e6
            let ring = closed(
                (0..<count).map { _ in
                    PlanarPoint(
                        x: (Double.random(in: 0...1, using: &generator) * grid).rounded() / grid,
                        y: (Double.random(in: 0...1, using: &generator) * grid).rounded() / grid)
                })
            try tally.add(ring, geosValid: geosValid)
        }
        #expect(tally.certified > 100)
        #expect(tally.refusedByGEOS > 1000)
    }

    @Test func largerRingsAreNeverCertifiedWhenGEOSRefusesThem() throws {
        // Stars of 13-60 vertices, some with two vertices swapped (often crossing edges far
        // apart in the ring, found only by the sweep) and some snapped to a coarse grid (touching
        // vertices and collinear edges).
        var generator = SplitMix(state: 9)
        var tally = Tally()
        for round in 0..<1500 {
            var ring = star(&generator, vertices: Int.random(in: 13...60, using: &generator))
            ring.removeLast()
            if round % 3 == 1 {
                let first = Int.random(in: 0..<ring.count, using: &generator)
                let second = Int.random(in: 0..<ring.count, using: &generator)
                ring.swapAt(first, second)
            } else if round % 3 == 2 {
                ring = ring.map { PlanarPoint(x: ($0.x * 1000).rounded() / 1000, y: ($0.y * 1000).rounded() / 1000) }
            }
            ring = closed(ring)
            try tally.add(ring, geosValid: geosValid)
        }
        #expect(tally.certified > 500)
        #expect(tally.refusedByGEOS > 300)
    }

    @Test(arguments: [
        // A bow-tie, a vertex touching an opposite edge, a spike folding back on its edge, a
        // repeated point, collinear points, and a turn so slight its products underflow.
        [(0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)],
        [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (1.0, 0.0), (0.0, 2.0)],
        [(0.0, 0.0), (2.0, 0.0), (3.0, 0.0), (2.0, 0.0), (2.0, 2.0)],
        [(0.0, 0.0), (1.0, 0.0), (1.0, 0.0), (1.0, 1.0)],
        [(0.0, 0.0), (1.0, 0.0), (2.0, 0.0)],
        [(0.0, 0.0), (1.0, 1e-300), (2.0, 0.0), (1.0, 1.0)],
    ])
    func edgeCasesAreLeftToGEOS(points: [(Double, Double)]) {
        let ring = closed(points.map { PlanarPoint(x: $0.0, y: $0.1) })
        #expect(!RingCertificate.certifiesSimple(ring))
    }

    @Test func validatorStillReportsGEOSReasons() {
        let validator = GeometryValidator()
        let bowTie = [(4.0, 52.0), (5.0, 53.0), (5.0, 52.0), (4.0, 53.0), (4.0, 52.0)].map {
            Coordinate(latitude: $0.1, longitude: $0.0)
        }
        let problems = validator.problems(in: .polygons([[bowTie]]))
        #expect(problems.first?.message.contains("Self-intersection") == true)
    }
}
