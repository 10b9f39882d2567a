/// The parsers under fuzzing, one libFuzzer target each (`FENCELINE_FUZZ_TARGET`).
///
/// Each target feeds the input to the codec exactly as a driver would (line formats split at `\n`
/// with a `\r` before it dropped, documents whole) and checks what comes out; a broken invariant
/// traps, which libFuzzer reports as a crash with the input that caused it.
enum FuzzTarget: String, CaseIterable, Sendable {
    case ndjson, csv, gpx, nmea, advertisement, catalog, geojson, checkpoint, gzip

    /// What the target reads, for the usage text.
    var summary: String {
        switch self {
        case .ndjson: "NDJSON reading lines, control records included (NDJSONReadingDecoder)"
        case .csv: "a CSV header and rows (LineDecoder .csv, CSVReadingDecoder)"
        case .gpx: "a GPX document (GPXDecoder)"
        case .nmea: "NMEA 0183 sentences, epochs across lines (LineDecoder .nmea, NMEADecoder)"
        case .advertisement: "BLE advertisement hex (AdvertisementDecoder)"
        case .catalog: "a JSON trigger catalog (CatalogDecoder)"
        case .geojson: "a GeoJSON FeatureCollection catalog (CatalogDecoder)"
        case .checkpoint: "a checkpoint file, header repaired so mutations reach the state (Engine(resuming:))"
        case .gzip: "a .gz input, read whole and in blocks of lines (LineReader over ISA-L)"
        }
    }
}
