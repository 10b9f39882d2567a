import FencelineFormats
import FencelineRun
import Testing

@testable import FencelineRender

/// The number formatting of path data.
@Suite struct SVGTextTests {
    @Test func pathPointsSeparateTheirNumbers() {
        #expect(SVGText.point(12, 3.5) == "12 3.5")
        // A negative y's minus sign separates the numbers on its own.
        #expect(SVGText.point(12, -3.5) == "12-3.5")
        // A y that rounds to 0 from below prints as 0 and needs its space.
        #expect(SVGText.point(12, -0.04) == "12 0")
        #expect(SVGText.point(-0.04, -0.04) == "0 0")
    }
}
