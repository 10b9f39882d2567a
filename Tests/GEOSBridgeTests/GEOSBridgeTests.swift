import GEOSBridge
import Testing

@Suite struct GEOSBridgeTests {
    let context = GEOSContext()

    func square(_ size: Double = 1) -> [[PlanarPoint]] {
        [
            [
                PlanarPoint(x: 0, y: 0), PlanarPoint(x: size, y: 0), PlanarPoint(x: size, y: size),
                PlanarPoint(x: 0, y: size), PlanarPoint(x: 0, y: 0),
            ]
        ]
    }

    @Test func validPolygonHasNoInvalidityReason() throws {
        let polygon = try context.makePolygon(rings: square())
        #expect(try polygon.invalidityReason() == nil)
        #expect(try polygon.area() == 1)
        #expect(polygon.kind == .polygon)
    }

    @Test func bowTieReportsGEOSsReason() throws {
        let bowTie = try context.makePolygon(rings: [
            [
                PlanarPoint(x: 0, y: 0), PlanarPoint(x: 1, y: 1), PlanarPoint(x: 1, y: 0), PlanarPoint(x: 0, y: 1),
                PlanarPoint(x: 0, y: 0),
            ]
        ])
        let reason = try #require(try bowTie.invalidityReason())
        #expect(reason.contains("Self-intersection"))
    }

    @Test func unclosedRingThrowsWithTheMessageFromGEOSsHandler() throws {
        do {
            _ = try context.makePolygon(rings: [
                [PlanarPoint(x: 0, y: 0), PlanarPoint(x: 1, y: 0), PlanarPoint(x: 1, y: 1), PlanarPoint(x: 0, y: 1)]
            ])
            Issue.record("expected GEOS to refuse an unclosed ring")
        } catch {
            #expect(error.operation == "GEOSGeom_createLinearRing")
            #expect(error.message.lowercased().contains("closed"))
        }
    }

    @Test func badWKTThrowsTheParseMessage() {
        #expect(throws: GEOSError.self) { try context.makeGeometry(wkt: "POLYGON((0 0, 1 1") }
    }

    @Test func preparedCoversIncludesTheBoundaryAndContainsDoesNot() throws {
        let prepared = try context.makePolygon(rings: square()).makePrepared()
        #expect(try prepared.covers(x: 1, y: 0.5))
        #expect(try !prepared.contains(x: 1, y: 0.5))
        #expect(try prepared.contains(x: 0.5, y: 0.5))
        #expect(try !prepared.covers(x: 1.5, y: 0.5))
    }

    @Test func intersectionUnionBufferAndReadBack() throws {
        let a = try context.makePolygon(rings: square(2))
        let b = try context.makeGeometry(wkt: "POLYGON((1 1, 3 1, 3 3, 1 3, 1 1))")
        #expect(try a.intersection(b).area() == 1)
        let touching = try context.makeMultiPolygon(polygons: [
            square(1),
            [
                [
                    PlanarPoint(x: 1, y: 0), PlanarPoint(x: 2, y: 0), PlanarPoint(x: 2, y: 1), PlanarPoint(x: 1, y: 1),
                    PlanarPoint(x: 1, y: 0),
                ]
            ],
        ])
        let merged = try touching.unaryUnion()
        #expect(try merged.polygonRings().count == 1)
        #expect(try merged.area() == 2)
        let disc = try context.makePoint(x: 0, y: 0).buffer(width: 1, quadrantSegments: 64)
        #expect(abs(try disc.area() - .pi) < 0.001)
        let line = try context.makeLineString([PlanarPoint(x: 0, y: 0), PlanarPoint(x: 3, y: 4)])
        #expect(try line.points().count == 2)
        #expect(try line.distance(to: context.makePoint(x: 0, y: 5)) > 2.9)
        #expect(try a.wkt().hasPrefix("POLYGON"))
    }

    @Test func versionIsThreePointSomething() {
        #expect(GEOSContext.version.hasPrefix("3."))
    }
}

@Suite struct GEOSSTRtreeTests {
    @Test func queryReturnsTheItemsWhoseEnvelopesIntersect() throws {
        let context = GEOSContext()
        let tree = try GEOSSTRtree(context: context)
        for item in 0..<100 {
            let x = Double(item % 10), y = Double(item / 10)
            tree.insert(try context.makeRectangle(minX: x, minY: y, maxX: x + 0.5, maxY: y + 0.5), item: item)
        }
        var found: [Int] = []
        tree.query(try context.makePoint(x: 3.25, y: 7.25), into: &found)
        #expect(found == [73])
        found = []
        tree.query(try context.makeRectangle(minX: 0, minY: 0, maxX: 1.2, maxY: 0.2), into: &found)
        #expect(found.sorted() == [0, 1])
        found = []
        tree.query(try context.makePoint(x: 3.75, y: 7.75), into: &found)
        #expect(found.isEmpty)
    }
}
