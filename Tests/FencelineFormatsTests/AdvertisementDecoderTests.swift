import Fenceline
import FencelineFormats
import Foundation
import Testing

@Suite struct AdvertisementDecoderTests {
    static let iBeacon = "02 01 06 1A FF 4C 00 02 15 2F234454CF6D4A0FADF2F4911BA9FFA6 0001 0007 C5"
    // Flags, the 0xFEAA service list, then service data: AA FE, frame 00, ranging −18 dBm,
    // namespace EDD1EBEAC04E5DEFA017, instance 000000000123, two RFU bytes.
    static let eddystone = "020106 0303AAFE 1716AAFE 00EE EDD1EBEAC04E5DEFA017 000000000123 0000"

    @Test func iBeaconFrame() throws {
        let decoded = try AdvertisementDecoder.decode(hex: Self.iBeacon)
        #expect(decoded.identity == BeaconIdentity(uuid: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6", major: 1, minor: 7))
        #expect(decoded.txPower == -59)
        #expect(decoded.kind == "ibeacon")
    }

    @Test func eddystoneUIDMapsByUUIDElision() throws {
        let decoded = try AdvertisementDecoder.decode(hex: Self.eddystone)
        #expect(
            decoded.identity == BeaconIdentity(uuid: "EDD1EBEA-0000-0000-0000-C04E5DEFA017", major: 0, minor: 0x0123))
        #expect(decoded.txPower == -18 - 41)
        #expect(
            try AdvertisementDecoder.decode(hex: "0x1516AAFE00EEEDD1EBEAC04E5DEFA017000000000123").identity.minor
                == 0x0123)
    }

    @Test(arguments: [
        ("", "empty advertisement"),
        ("020106", "no iBeacon or Eddystone-UID frame"),
        ("1AFF4C000215", "claims 26 bytes but only 5 follow"),
        ("0BFF4C0002152F234454CF6D", "iBeacon data must be 21 bytes"),
        ("06FF4C0010050102", "not an iBeacon (type byte 0x10"),
        ("0A16AAFE10EE0367676C00", "Eddystone URL frame"),
        ("0B16AAFE00EEEDD1EBEAC04E", "18 or 20 bytes, found 8"),
        ("1516AAFE00EEEDD1EBEAC04E5DEFA017010000000123", "first two bytes must be 00 00"),
        ("0201061", "odd number of digits"),
        ("02010G", "not hex"),
    ])
    func malformedFramesAreBadInputNotCrashes(hex: String, reason: String) {
        do {
            _ = try AdvertisementDecoder.decode(hex: hex)
            Issue.record("decoded \(hex)")
        } catch {
            #expect(error.field == "adv")
            #expect(error.message.contains(reason), "\(error.message)")
        }
    }

    @Test func randomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let hex = (0..<count).map { _ in String(format: "%02X", UInt8.random(in: 0...255, using: &generator)) }
                .joined()
            _ = try? AdvertisementDecoder.decode(hex: hex)
        }
        // Truncations of valid frames at every length.
        for frame in [Self.iBeacon, Self.eddystone] {
            let digits = frame.filter { $0 != " " }
            for length in stride(from: 0, to: digits.count, by: 2) {
                _ = try? AdvertisementDecoder.decode(hex: String(digits.prefix(length)))
            }
        }
    }
}
