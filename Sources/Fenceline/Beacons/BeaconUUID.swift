extension BeaconIdentity {
    /// `text` as an upper-case UUID with dashes (`2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6`), accepting
    /// that form in any case or the 32 hex digits without dashes; `nil` for anything else.
    public static func normalizedUUID(_ text: String) -> String? {
        let digits = text.uppercased().filter { $0 != "-" }
        guard digits.count == 32, digits.allSatisfy(\.isHexDigit) else { return nil }
        if text.contains("-") {
            // Dashes, when present, must sit where a UUID has them.
            let groups = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
            guard groups == [8, 4, 4, 4, 12] else { return nil }
        }
        var result = ""
        for (index, character) in digits.enumerated() {
            if [8, 12, 16, 20].contains(index) { result.append("-") }
            result.append(character)
        }
        return result
    }
}
