import Fenceline
import FencelineFormats
import Foundation

/// What the targets keep between inputs: building a catalog decoder makes a GEOS context, too
/// slow to do for every input.
final class FuzzHarness {
    let catalogDecoder = CatalogDecoder()
    /// Decodes `add` records too, against an empty catalog, as a run without categories does.
    let ndjson: NDJSONReadingDecoder
    /// Decodes the round-trip lines; without a request context, as the encoder writes no controls.
    let plainNDJSON = NDJSONReadingDecoder()

    /// Whether findings already written down are stepped around (`FENCELINE_FUZZ_SKIP_KNOWN=1`,
    /// `Tools/fuzz --skip-known`), so that a long run can look for others before they are fixed.
    let skipsKnownFindings = ProcessInfo.processInfo.environment["FENCELINE_FUZZ_SKIP_KNOWN"] == "1"

    init() {
        ndjson = NDJSONReadingDecoder(requests: .init(decoder: catalogDecoder, catalog: Catalog()))
    }

    /// Runs `target` on one input.
    func run(_ target: FuzzTarget, _ input: UnsafeBufferPointer<UInt8>) {
        switch target {
        case .ndjson: fuzzNDJSON(input)
        case .csv: fuzzCSV(input)
        case .gpx: fuzzGPX(input)
        case .nmea: fuzzNMEA(input)
        case .advertisement: fuzzAdvertisement(input)
        case .catalog, .geojson: fuzzCatalog(input)
        case .checkpoint: fuzzCheckpoint(input)
        }
    }
}

@available(*, unavailable)
extension FuzzHarness: Sendable {}
