import Fenceline
import FencelineFormats

/// Traps with `message` unless `condition` holds: a trap is what libFuzzer keeps an input for.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("invariant broken: \(message())") }
}

/// Calls `body` with each line of `input` and its 1-based number, split as the run driver's
/// `LineReader` splits: at `\n`, a `\r` before it (or at the very end) dropped.
func forEachLine(in input: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Int) -> Void) {
    var start = 0
    var number = 1
    while start < input.count {
        let newline = input[start...].firstIndex(of: 0x0A) ?? input.count
        let end = newline > start && input[newline - 1] == 0x0D ? newline - 1 : newline
        body(UnsafeBufferPointer(rebasing: input[start..<end]), number)
        start = newline + 1
        number += 1
    }
}

extension FuzzHarness {
    /// Checks what every decoder promises of a reading, then that the NDJSON writer and reader
    /// carry it unchanged (the ingest path stores readings in that form).
    func checkReading(_ reading: Reading, from source: String) {
        switch reading {
        case .fix(let fix):
            require(!fix.device.isEmpty, "\(source): a fix with an empty device")
            require((-90.0...90.0).contains(fix.coordinate.latitude), "\(source): latitude \(fix.coordinate.latitude)")
            require(
                (-180.0...180.0).contains(fix.coordinate.longitude), "\(source): longitude \(fix.coordinate.longitude)")
            if let accuracy = fix.accuracy {
                require(accuracy >= 0 && accuracy.isFinite, "\(source): accuracy \(accuracy)")
            }
            // JSON cannot hold an infinity, so a decoder must refuse one rather than carry it along.
            for value in [fix.speed, fix.heading, fix.altitude] {
                if let value { require(value.isFinite, "\(source): a carried-along value \(value)") }
            }
        case .sighting(let sighting):
            require(!sighting.device.isEmpty, "\(source): a sighting with an empty device")
            require(
                sighting.rssi.isFinite && (sighting.rssi <= 0 || sighting.rssi == 127),
                "\(source): RSSI \(sighting.rssi)")
            checkIdentity(sighting.beacon, from: source)
            if let txPower = sighting.txPower {
                // An `adv` frame's power must pass the check a `beacon.txPower` passes.
                require(txPower >= -200 && txPower < 0, "\(source): txPower \(txPower), which a beacon line refuses")
            }
        case .control:
            return
        }
        var line: [UInt8] = []
        require(ReadingEncoder.encode(reading, into: &line), "\(source): the encoder wrote nothing")
        require(line.last == 0x0A, "\(source): an encoded reading does not end its line")
        line.removeLast()
        let decoded: Reading?
        do {
            decoded = try line.withUnsafeBufferPointer { try NDJSONReadingDecoder().decode($0) }
        } catch {
            fatalError("invariant broken: \(source): \(String(decoding: line, as: UTF8.self)) reads back as \(error)")
        }
        require(
            decoded == reading,
            "\(source): \(reading) reads back as \(String(describing: decoded)) from \(String(decoding: line, as: UTF8.self))"
        )
        var again: [UInt8] = []
        if let decoded { ReadingEncoder.encode(decoded, into: &again) }
        require(again.dropLast() == line[...], "\(source): writing a reading read back changes it")
    }

    /// A beacon identity as the decoders make it: a normalised UUID, major and minor in 16 bits.
    func checkIdentity(_ identity: BeaconIdentity, from source: String) {
        require(
            BeaconIdentity.normalizedUUID(identity.uuid) == identity.uuid, "\(source): UUID \(identity.uuid)")
        require((0...65_535).contains(identity.major), "\(source): major \(identity.major)")
        require((0...65_535).contains(identity.minor), "\(source): minor \(identity.minor)")
    }
}
