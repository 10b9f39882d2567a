import Fenceline
import FencelineFormats

extension FuzzHarness {
    /// Every line through the full decoder, the canonical fast path, the deferring decoder the
    /// parallel parser uses and `LineDecoder`: all must agree on what the line is. The decoders
    /// live for the input, as for a file, so their per-minute date cache carries from line to
    /// line; a decoder made for the line alone must read it the same.
    func fuzzNDJSON(_ input: UnsafeBufferPointer<UInt8>) {
        let ndjson = NDJSONReadingDecoder(requests: requests)
        var lines = LineDecoder(format: .ndjson, device: "", requests: requests)
        forEachLine(in: input) { line, number in
            let full = Result { () throws(LineError) in try ndjson.decode(line) }
            let alone = Result { () throws(LineError) in try NDJSONReadingDecoder(requests: requests).decode(line) }
            require(alone == full, "line \(number): reads \(full) after the lines before it, \(alone) alone")
            // `decode` takes the canonical path itself; the full parse alone must agree with it.
            if let fix = ndjson.canonicalFix(line) {
                let parsed = Result { () throws(LineError) in try ndjson.decodeNonCanonical(line) }
                require(parsed == .success(.fix(fix)), "line \(number): the canonical path reads \(fix), not \(parsed)")
            }
            // A run without a reorder window reads no speed, heading or altitude: the same lines
            // must be read, with the same position.
            let kept = ndjson.canonicalParts(line)
            let skipped = ndjson.canonicalParts(line, motion: false)
            require(
                (kept == nil) == (skipped == nil), "line \(number): motion skipped reads \(String(describing: skipped))"
            )
            if let kept, let skipped {
                require(
                    skipped.areMotionSkipped(from: kept), "line \(number): motion skipped reads \(skipped), not \(kept)"
                )
            }
            // The run builds a canonical line's fix from its parts and sends only the others on.
            let viaLines: Result<Reading?, LineError>
            if let parts = lines.canonicalParts(line) {
                viaLines = .success(.fix(parts.fix(in: line)))
            } else {
                viaLines = Result { () throws(LineError) in try lines.decode(line, number: number, afterCanonical: true)
                }
            }
            require(viaLines == full, "line \(number): LineDecoder reads \(viaLines), not \(full)")
            switch (full, Result { () throws(LineError) in try ndjson.decodeDeferringControls(line) }) {
            case (.success(let reading?), .success(.reading(let deferred))):
                require(reading == deferred, "line \(number): deferring reads \(deferred), not \(reading)")
            case (.success(nil), .success(.blank)), (.success(.control?), .success(.control)),
                (.failure, .success(.control)):
                break
            case (.failure(let error), .failure(let deferred)):
                require(error == deferred, "line \(number): deferring fails with \(deferred), not \(error)")
            case (let full, let deferred):
                fatalError("invariant broken: line \(number): decode gives \(full), deferring \(deferred)")
            }
            if case .success(let reading?) = full { checkReading(reading, from: "line \(number)") }
        }
    }

    /// The first non-blank line is the header; every fix must also survive being written as a
    /// quoted CSV row under a header of every column and read back.
    func fuzzCSV(_ input: UnsafeBufferPointer<UInt8>) {
        var lines = LineDecoder(format: .csv, device: "", requests: nil)
        forEachLine(in: input) { line, number in
            // The rows' fast path (its per-minute time carried from row to row) reads what the
            // full decoder reads, or leaves the row to it.
            let fast = lines.canonicalParts(line).map { Reading.fix($0.fix(in: line)) }
            let full = Result { () throws(LineError) in try lines.decode(line, number: number) }
            if let fast {
                require(full == .success(fast), "line \(number): the CSV fast path reads \(fast), not \(full)")
            }
            guard case .success(let reading?) = full else { return }
            checkReading(reading, from: "line \(number)")
            guard case .fix(let fix) = reading else {
                fatalError("invariant broken: line \(number): CSV gave \(reading)")
            }
            checkCSVRow(fix, from: "line \(number)")
        }
    }

    private func checkCSVRow(_ fix: Fix, from source: String) {
        func number(_ value: Double?) -> String { value?.description ?? "" }
        let magnitude = fix.time.microseconds.magnitude
        let micros = String(magnitude % 1_000_000)
        let seconds =
            (fix.time.microseconds < 0 ? "-" : "") + "\(magnitude / 1_000_000)."
            + String(repeating: "0", count: 6 - micros.count) + micros
        // Quoted on its bytes: a quote followed by a combining mark is no `Character` "\"".
        var row: [UInt8] = [UInt8(ascii: "\"")]
        for byte in fix.device.utf8 {
            row.append(byte)
            if byte == UInt8(ascii: "\"") { row.append(byte) }
        }
        row.append(UInt8(ascii: "\""))
        for field in [
            seconds, number(fix.coordinate.latitude), number(fix.coordinate.longitude), number(fix.accuracy),
            number(fix.speed), number(fix.heading), number(fix.altitude),
        ] {
            row += Array(",\(field)".utf8)
        }
        let header = Array("device,time,lat,lon,accuracy,speed,heading,altitude".utf8)
        let decoded = header.withUnsafeBufferPointer { header in
            row.withUnsafeBufferPointer { row in
                Result { () throws(LineError) in try CSVReadingDecoder(header: header).decode(row) }
            }
        }
        require(
            decoded == .success(.fix(fix)),
            "\(source): \(fix) as the row \(String(decoding: row, as: UTF8.self)) reads back as \(decoded)")
    }

    /// Sentences across lines, as a receiver log: the decoder keeps epochs between lines, and its
    /// last epoch comes out at the end.
    func fuzzNMEA(_ input: UnsafeBufferPointer<UInt8>) {
        var lines = LineDecoder(format: .nmea, device: "receiver", requests: nil)
        var readings: [Reading] = []
        forEachLine(in: input) { line, number in
            if let reading = try? lines.decode(line, number: number) { readings.append(reading) }
        }
        if let last = lines.finish() { readings.append(last) }
        for reading in readings {
            guard case .fix(let fix) = reading, fix.device == "receiver" else {
                fatalError("invariant broken: NMEA gave \(reading)")
            }
            checkReading(reading, from: "NMEA")
        }
    }
}
