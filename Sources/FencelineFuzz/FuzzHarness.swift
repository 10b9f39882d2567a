import Fenceline
import FencelineFormats

/// What the targets keep between inputs: building a catalog decoder makes a GEOS context, too
/// slow to do for every input.
final class FuzzHarness {
    let catalogDecoder = CatalogDecoder()
    /// What NDJSON decoders need to read `add` records: an empty catalog, as a run without
    /// categories has. Decoders themselves are made for each input, so that an input that fails
    /// fails alone too.
    let requests: NDJSONReadingDecoder.RequestContext

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
        case .gzip: fuzzGzip(input)
        }
    }
}

@available(*, unavailable)
extension FuzzHarness: Sendable {}
