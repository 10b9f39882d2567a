import Fenceline
import FencelineFormats
import Foundation

/// What the targets keep between inputs: building a catalog decoder makes a GEOS context, too
/// slow to do for every input.
final class FuzzHarness {
    let catalogDecoder = CatalogDecoder()
    /// What NDJSON decoders need to read `add` records: an empty catalog, as a run without
    /// categories has. Decoders themselves are made for each input, so that an input that fails
    /// fails alone too.
    let requests: NDJSONReadingDecoder.RequestContext

    /// Whether findings already written down are stepped around (`FENCELINE_FUZZ_SKIP_KNOWN=1`,
    /// `Tools/fuzz --skip-known`), so that a long run can look for others before they are fixed.
    let skipsKnownFindings = ProcessInfo.processInfo.environment["FENCELINE_FUZZ_SKIP_KNOWN"] == "1"

    init() {
        requests = NDJSONReadingDecoder.RequestContext(decoder: catalogDecoder, catalog: Catalog())
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
