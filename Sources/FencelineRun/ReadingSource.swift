public import Fenceline
public import FencelineFormats

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
    /// GPX file is a recording rather than a stream, and its bad points after them); `body` returns `false` to stop
    /// (an NMEA receiver epoch open at that point is still passed on: its sentences came before).
    /// - Throws: ``InputError`` when the input cannot be read on (a read error).
    public func forEach(_ body: (Result<Reading, InputError>) -> Bool) throws {
        if format == .gpx {
            // Parsed as it is read: only the points are held, however large the document.
            var readError: InputError?
            let items = GPXDecoder.decode(
                chunks: { [reader] in
                    do throws(InputError) {
                        return try reader.nextChunk()
                    } catch {
                        readError = error
                        return nil
                    }
                }, fileDevice: device, deviceOverride: deviceOverride)
            if let readError { throw readError }
            for item in Self.timeOrdered(items) {
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
        var keepsReading = true
        try reader.forEachLine(
            oversized: { number in
                keepsReading =
                    keepsReading
                    && body(
                        .failure(
                            reader.oversizedLineError(line: number)))
            }
        ) { line, number in
            guard keepsReading else { return false }
            do throws(LineError) {
                if let reading = try decoder.decode(line, number: number) { keepsReading = body(.success(reading)) }
            } catch {
                keepsReading = body(.failure(error.located(file: reader.name, line: number)))
            }
            return keepsReading
        }
        // An NMEA epoch still open came before the end or the stop, so it is read either way.
        if let reading = decoder.finish() { keepsReading = body(.success(reading)) && keepsReading }
        if keepsReading, let failure = reader.failure { _ = body(.failure(failure)) }
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

extension InputFormat {
    /// The format of an input: `forced` when given, else its name's extension, else its content.
    public static func of(_ reader: LineReader, forced: InputFormat?) throws(InputError) -> InputFormat {
        if let forced { return forced }
        if let known = fromExtension(of: reader.name) { return known }
        return sniff(try reader.peek())
    }
}
