package import Fenceline

/// Turns the lines of one line-based input into readings, whatever its format (NDJSON, CSV with
/// its header, NMEA with its epochs), keeping the per-input state those formats need.
package struct LineDecoder {
    private enum State {
        case ndjson
        /// `failed` when the header was bad (the rows are then not reported one by one); the
        /// rows' decoder is ``rows`` once the header is read.
        case csv(failed: Bool)
        case nmea(NMEADecoder)
    }

    private var state: State
    /// Kept outside `state`, so a line reads it in place rather than copying it out of the enum
    /// (with its references) as a pattern binding would; a switch over `state` copies all of it
    /// (the NMEA decoder's size) first.
    private let ndjson: NDJSONReadingDecoder
    /// Whether the lines are NDJSON: tested on every line instead of `state`.
    private let isNDJSON: Bool
    /// A CSV input's rows' decoder, once its header is read.
    private var rows: CSVReadingDecoder?

    /// A decoder for `format`, which must be line-based (not GPX); `device` names the device of
    /// formats whose lines carry none (NMEA).
    package init(format: InputFormat, device: String, requests: NDJSONReadingDecoder.RequestContext?) {
        ndjson = NDJSONReadingDecoder(requests: requests)
        switch format {
        case .ndjson, .gpx: state = .ndjson
        case .csv: state = .csv(failed: false)
        case .nmea: state = .nmea(NMEADecoder(device: device))
        }
        isNDJSON = format == .ndjson || format == .gpx
    }

    /// For NDJSON and CSV rows, the fields of a plain fix line, the device a range of `line`
    /// (``NDJSONReadingDecoder/canonicalParts(_:)``, ``CSVReadingDecoder/canonicalParts(_:)``);
    /// `nil` for any other line or format, which then goes to `decode(_:number:afterCanonical:)`.
    ///
    /// Mutating though it changes nothing: the run keeps its decoder in a class property, from
    /// which a non-mutating call would first copy the whole decoder (retaining what it holds) for
    /// every line; a mutating call reads it in place. `motion`: as for
    /// ``NDJSONReadingDecoder/canonicalParts(_:motion:)``.
    @inline(__always)
    package mutating func canonicalParts(_ line: UnsafeBufferPointer<UInt8>, motion: Bool = true)
        -> NDJSONReadingDecoder.CanonicalParts?
    {
        isNDJSON ? ndjson.canonicalParts(line, motion: motion) : rows?.canonicalParts(line)
    }

    /// Whether this decodes CSV, and its rows' decoder once the header is read.
    package var csv: (isCSV: Bool, rows: CSVReadingDecoder?) {
        guard case .csv = state else { return (false, nil) }
        return (true, rows)
    }

    /// Whether a CSV input's header is still to come (blank lines may precede it).
    package var awaitsCSVHeader: Bool {
        guard rows == nil, case .csv(let failed) = state else { return false }
        return !failed
    }

    /// The reading `line` completes, `nil` for none (a blank or comment line, a CSV header, an NMEA
    /// sentence whose epoch is still open). `afterCanonical`: `canonicalParts(_:)` has turned the
    /// line down already.
    package mutating func decode(_ line: UnsafeBufferPointer<UInt8>, number: Int, afterCanonical: Bool = false)
        throws(LineError) -> Reading?
    {
        switch state {
        case .ndjson:
            return afterCanonical ? try ndjson.decodeNonCanonical(line) : try ndjson.decode(line)
        case .csv(let failed):
            if let rows { return try rows.decode(line) }
            if failed || line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
            do throws(LineError) {
                rows = try CSVReadingDecoder(header: line)
            } catch {
                state = .csv(failed: true)
                throw error
            }
            return nil
        case .nmea(var decoder):
            defer { state = .nmea(decoder) }
            return try decoder.decode(line, lineNumber: number)?.reading
        }
    }

    /// At the end of the input: a reading still held (an NMEA receiver's last epoch).
    package mutating func finish() -> Reading? {
        guard case .nmea(var decoder) = state else { return nil }
        defer { state = .nmea(decoder) }
        return decoder.finish()?.reading
    }
}
