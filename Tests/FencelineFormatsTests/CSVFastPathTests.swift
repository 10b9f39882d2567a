import Fenceline
import TestSupport
import Testing

@testable import FencelineFormats

/// The CSV fast path (`CSVReadingDecoder.canonicalParts`) against the full decoder on random
/// rows: whatever it reads is the full decoder's fix, and it reads the plain rows.
@Suite struct CSVFastPathTests {
    @Test(arguments: [
        "device,time,lat,lon,accuracy", "time,lat,lon,device",
        "device,timestamp,latitude,longitude,speed,heading,ele,x",
    ])
    func rowsReadAsTheFullDecoderReadsThem(header: String) throws {
        let decoder = try Array(header.utf8).withUnsafeBufferPointer { try CSVReadingDecoder(header: $0) }
        let columns = header.split(separator: ",").map(String.init)
        var generator = SplitMix(state: 5)
        func pick(_ list: [String]) -> String { list[Int.random(in: 0..<list.count, using: &generator)] }
        let values: [String: [String]] = [
            "device": ["d1", "truck-17", "", " padded ", "ünï", #""quoted""#, "a\tb"],
            // Times of a few minutes, valid and not, so the fast path's per-minute date carries
            // from row to row as in a file.
            "time": [
                "2026-03-02T08:00:00Z", " 2026-03-02T08:00:00.125Z ", "1772438400.5", "", "1e9", "soon", "-1",
                "2026-03-02T08:00:59.999+01:00", "2026-03-02T08:01:00Z", "2026-03-02T08:00:60Z",
                "2026-02-30T08:00:00Z", "2026-03-02 09:00:00+01:00", "2026-03-02T08:00:00", "2026-03-02T08:00:0Z",
            ],
            "lat": ["52.37", " -0 ", "91", "", "x", "1e1", "52.370000001", "01", "1.", "-", "52.37 "],
            "lon": ["4.89", "180", "-180.5", "0"],
            "number": ["8", "", "-1", "12.5", " 3 ", "1e400", "n/a", "0", "-0.5", "+1", "7 "],
        ]
        var read = 0
        var plain = 0
        for round in 0..<5000 {
            var fields = columns.map { column -> String in
                switch column {
                case "device": pick(values["device"]!)
                case "time", "timestamp": pick(values["time"]!)
                case "lat", "latitude": pick(values["lat"]!)
                case "lon", "longitude": pick(values["lon"]!)
                default: pick(values["number"]!)
                }
            }
            if round % 25 == 0 { fields.append("extra") }
            if round % 31 == 0 { fields.removeLast() }
            let line = fields.joined(separator: ",")
            let bytes = Array(line.utf8)
            let full = bytes.withUnsafeBufferPointer { buffer in
                Result { () throws(LineError) in try decoder.decode(buffer) }
            }
            let fast = bytes.withUnsafeBufferPointer { buffer in
                decoder.canonicalParts(buffer).map { $0.fix(in: buffer) }
            }
            if case .success(.fix(let fix)?) = full, !line.contains("\""),
                fix.device.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F })
            {
                plain += 1
            }
            guard let fast else { continue }
            read += 1
            guard case .success(let reading?) = full else {
                Issue.record("\(line): the fast path read \(fast), the full decoder gave \(full)")
                continue
            }
            #expect(reading == .fix(fast), "\(line)")
        }
        #expect(read > 100 && read == plain, "read \(read) of \(plain) plain rows")
    }
}
