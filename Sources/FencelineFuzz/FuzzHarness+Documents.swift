import Fenceline
import FencelineFormats

extension FuzzHarness {
    /// A whole document; every point that reads is a valid fix that survives NDJSON.
    func fuzzGPX(_ input: UnsafeBufferPointer<UInt8>) {
        for item in GPXDecoder.decode(Array(input), fileDevice: "file", deviceOverride: nil) {
            require(item.line >= 1, "GPX item at line \(item.line)")
            guard case .success(let reading) = item.result else { continue }
            guard case .fix = reading else { fatalError("invariant broken: GPX gave \(reading)") }
            checkReading(reading, from: "GPX line \(item.line)")
        }
    }

    /// The input as hex text, then its bytes as the advertisement itself (spelled with a prefix,
    /// lower case and separators, which must read as the plain spelling does): the second reaches
    /// the AD structure walk without the fuzzer having to learn hex first.
    func fuzzAdvertisement(_ input: UnsafeBufferPointer<UInt8>) {
        if let decoded = try? AdvertisementDecoder.decode(hex: String(decoding: input, as: UTF8.self)) {
            checkAdvertisement(decoded)
        }
        guard input.count <= 255 else { return }
        let digits = "0123456789ABCDEF".utf8.map { $0 }
        var plain: [UInt8] = []
        var spaced = Array("0x".utf8)
        for (index, byte) in input.enumerated() {
            let pair = [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            plain += pair
            if index > 0 { spaced.append(index.isMultiple(of: 2) ? UInt8(ascii: ":") : UInt8(ascii: " ")) }
            spaced += pair.map { $0 | 0x20 }  // lower case; digits are unchanged by it
        }
        let decoded = Result { () throws(LineError) in
            try AdvertisementDecoder.decode(hex: String(decoding: plain, as: UTF8.self))
        }
        let respelled = Result { () throws(LineError) in
            try AdvertisementDecoder.decode(hex: String(decoding: spaced, as: UTF8.self))
        }
        require(decoded == respelled, "hex \(plain) reads as \(decoded), respelled as \(respelled)")
        if case .success(let advertisement) = decoded { checkAdvertisement(advertisement) }
    }

    private func checkAdvertisement(_ decoded: AdvertisementDecoder.Decoded) {
        checkIdentity(decoded.identity, from: "advertisement")
        require(decoded.kind == "ibeacon" || decoded.kind == "eddystone-uid", "advertisement kind \(decoded.kind)")
        // The frame's own range: a signed byte, less 41 dBm for Eddystone's power at 0 m. Which of
        // these a beacon can have is the sighting line's call (the ndjson target checks that).
        require((-169.0...127.0).contains(decoded.txPower), "advertisement txPower \(decoded.txPower)")
    }

    /// A catalog that decodes was validated with the engine's own validator, so an engine must
    /// take it, and its checkpoint (which holds the catalog) must read back unchanged.
    func fuzzCatalog(_ input: UnsafeBufferPointer<UInt8>) {
        guard let decoded = try? catalogDecoder.decode(Array(input)) else { return }
        let engine: Engine
        do {
            engine = try Engine(catalog: decoded.catalog)
        } catch {
            fatalError("invariant broken: the engine refuses a decoded catalog: \(error)")
        }
        checkCheckpointRoundTrip(engine.checkpoint(), from: "the decoded catalog's engine")
    }
}
