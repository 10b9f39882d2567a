import TestSupport
import Testing

@testable import Fenceline

/// Content placeholders are filled by bytes when the text is ASCII: the same strings as the
/// character-wise search they replace, on random texts made of placeholder pieces.
@Suite struct PlaceholderTests {
    static func characterWise(_ text: String, _ target: String, _ replacement: String) -> String {
        text.characterWiseReplacingAll(target, with: replacement)
    }

    @Test func bytesFillAsCharactersDo() {
        var generator = SplitMix(state: 3)
        let pieces = ["{device}", "{dev", "ice}", "{", "}", "{{device}}", "a", " ", "\r\n", "{time}", "x{other}y", ""]
        let targets = ["{device}", "{time}", "{other}", "{", "}}"]
        let replacements = ["truck-17", "", "{device}", "ü", "{time}{time}"]
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            let target = targets.randomElement(using: &generator)!
            let replacement = replacements.randomElement(using: &generator)!
            #expect(
                text.replacingAll(target, with: replacement) == Self.characterWise(text, target, replacement),
                "\(text.debugDescription) \(target) → \(replacement)")
        }
        // Text that is not ASCII takes the character-wise path: a combining mark after a brace
        // makes another character, which a placeholder does not match.
        let accented = "{device}\u{301} at {device}"
        #expect(accented.replacingAll("{device}", with: "car") == Self.characterWise(accented, "{device}", "car"))
    }
}
