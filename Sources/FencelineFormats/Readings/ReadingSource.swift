public import Fenceline

/// Turns the lines of one line-based input into readings, whatever its format (NDJSON, CSV with
/// its header, NMEA with its epochs), keeping the per-input state those formats need.
struct LineDecoder {
    private enum State {
        case ndjson
        /// `nil` until the header is read; `failed` when the header was bad (the rows are then
        /// not reported one by one).
        case csv(CSVReadingDecoder?, failed: Bool)
        case nmea(NMEADecoder)
    }

    private var state: State
    /// Kept outside `state`, so a line reads it in place rather than copying it out of the enum
    /// (with its references) as a pattern binding would.
    private let ndjson: NDJSONReadingDecoder

    /// A decoder for `format`, which must be line-based (not GPX); `device` names the device of
    /// formats whose lines carry none (NMEA).
    init(format: InputFormat, device: String, requests: NDJSONReadingDecoder.RequestContext?) {
        ndjson = NDJSONReadingDecoder(requests: requests)
        switch format {
        case .ndjson, .gpx: state = .ndjson
        case .csv: state = .csv(nil, failed: false)
        case .nmea: state = .nmea(NMEADecoder(device: device))
        }
    }

    /// For NDJSON, the fields of a canonically laid-out fix line, the device a range of `line`
    /// (``NDJSONReadingDecoder/canonicalParts(_:)``); `nil` for any other line or format, which
    /// then goes to `decode(_:number:afterCanonical:)`.
    ///
    /// Mutating though it changes nothing: the run keeps its decoder in a class property, from
    /// which a non-mutating call first copied the whole decoder (retaining what it holds) for
    /// every line, about 5 % of a run; a mutating call reads it in place.
    @inline(__always)
    mutating func canonicalParts(_ line: UnsafeBufferPointer<UInt8>) -> NDJSONReadingDecoder.CanonicalParts? {
        guard case .ndjson = state else { return nil }
        return ndjson.canonicalParts(line)
    }

    /// The reading `line` completes, `nil` for none (a blank or comment line, a CSV header, an NMEA
    /// sentence whose epoch is still open). `afterCanonical`: `canonicalParts(_:)` has turned the
    /// line down already.
    mutating func decode(_ line: UnsafeBufferPointer<UInt8>, number: Int, afterCanonical: Bool = false)
        throws(LineError) -> Reading?
    {
        switch state {
        case .ndjson:
            return afterCanonical ? try ndjson.decodeNonCanonical(line) : try ndjson.decode(line)
        case .csv(let decoder?, _):
            return try decoder.decode(line)
        case .csv(nil, let failed):
            if failed || line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
            do throws(LineError) {
                state = .csv(try CSVReadingDecoder(header: line), failed: false)
            } catch {
                state = .csv(nil, failed: true)
                throw error
            }
            return nil
        case .nmea(var decoder):
            defer { state = .nmea(decoder) }
            return try decoder.decode(line, lineNumber: number)?.reading
        }
    }

    /// At the end of the input: a reading still held (an NMEA receiver's last epoch).
    mutating func finish() -> Reading? {
        guard case .nmea(var decoder) = state else { return nil }
        defer { state = .nmea(decoder) }
        return decoder.finish()?.reading
    }
}

/// One input of any format, read as a sequence of readings and bad lines in order: what
/// `fenceline readings` and `render` read, and how the run pipeline reads GPX (and, when
/// sharded, CSV and NMEA).
public struct ReadingSource {
    /// The input.
    public let reader: LineReader
    /// Its format, from `--input-format`, the extension or the content.
    public let format: InputFormat
    /// The device of inputs that name none (GPX without track names, NMEA): `--device`, else the
    /// file name without its extensions.
    public let device: String
    private let deviceOverride: String?
    private let requests: NDJSONReadingDecoder.RequestContext?

    /// Opens `path` (`-` is standard input) and tells its format.
    /// - Parameters:
    ///   - format: `--input-format`, overriding extension and content.
    ///   - device: `--device`: the device of every GPX and NMEA reading.
    ///   - requests: decodes `add` control records; without it they are refused.
    /// - Throws: ``InputError`` when the file cannot be opened.
    public init(
        path: String, format: InputFormat? = nil, device: String? = nil,
        requests: NDJSONReadingDecoder.RequestContext? = nil
    ) throws(InputError) {
        try self.init(reader: LineReader(path: path), format: format, device: device, requests: requests)
    }

    /// Reads an opened input.
    public init(
        reader: LineReader, format: InputFormat?, device: String?, requests: NDJSONReadingDecoder.RequestContext?
    ) throws(InputError) {
        self.reader = reader
        self.format = try InputFormat.of(reader, forced: format)
        self.deviceOverride = device
        self.device = device ?? Self.fileDevice(reader.name)
        self.requests = requests
    }

    /// The device a file's name gives: its last path component without extensions (`-` for
    /// standard input is `stdin`).
    public static func fileDevice(_ path: String) -> String {
        guard path != "-" else { return "stdin" }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var stem = Substring(name)
        if stem.lowercased().hasSuffix(".gz") { stem = stem.dropLast(3) }
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = stem[..<dot] }
        return stem.isEmpty ? name : String(stem)
    }

    /// Calls `body` with each reading or bad line in order (GPX points in time order, since a
    /// GPX file is a recording rather than a stream, and its bad points after them); `body` returns `false` to stop.
    /// - Throws: ``InputError`` when the input cannot be read on (a read error).
    public func forEach(_ body: (Result<Reading, InputError>) -> Bool) throws {
        if format == .gpx {
            let bytes = try reader.readAll()
            for item in Self.timeOrdered(GPXDecoder.decode(bytes, fileDevice: device, deviceOverride: deviceOverride)) {
                switch item.result {
                case .success(let reading): guard body(.success(reading)) else { return }
                case .failure(let error):
                    guard body(.failure(error.located(file: reader.name, line: item.line))) else { return }
                }
            }
            if let failure = reader.failure { _ = body(.failure(failure)) }
            return
        }
        var decoder = LineDecoder(format: format, device: device, requests: requests)
        var goOn = true
        try reader.forEachLine(
            oversized: { number in
                goOn =
                    goOn
                    && body(
                        .failure(
                            reader.oversizedLineError(line: number)))
            }
        ) { line, number in
            guard goOn else { return false }
            do throws(LineError) {
                if let reading = try decoder.decode(line, number: number) { goOn = body(.success(reading)) }
            } catch {
                goOn = body(.failure(error.located(file: reader.name, line: number)))
            }
            return goOn
        }
        guard goOn else { return }
        if let reading = decoder.finish() { goOn = body(.success(reading)) }
        if goOn, let failure = reader.failure { _ = body(.failure(failure)) }
    }

    /// GPX items with the readings stably by time, then the errors in document order (so that
    /// `--strict` on a damaged file still applies every good point).
    static func timeOrdered(_ items: [GPXDecoder.Item]) -> [GPXDecoder.Item] {
        var errors: [GPXDecoder.Item] = []
        var readings: [(time: Timestamp, index: Int, item: GPXDecoder.Item)] = []
        for item in items {
            if case .success(let reading) = item.result, let time = reading.time {
                readings.append((time, readings.count, item))
            } else {
                errors.append(item)
            }
        }
        readings.sort { ($0.time, $0.index) < ($1.time, $1.index) }
        return readings.map(\.item) + errors
    }
}
