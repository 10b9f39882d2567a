public import Fenceline

/// Events as one aligned line each, for reading in a terminal (control characters read from input
/// escaped, see ``Swift/String/terminalSafe``):
///
/// ```
/// #3    2026-03-02T08:00:30Z  exit          depot          truck-17       31.2 m out      Depot: Left  (since 2026-03-02T08:00:10Z)
/// ```
public struct TextEventEncoder: EventEncoder {
    /// Creates the encoder.
    public init() {}

    public func encode(_ event: Event, into bytes: inout [UInt8]) {
        var line = "#\(event.sequence)".padded(to: 5)
        line += " \(event.time.rfc3339)".padded(to: 26)
        line += "  " + event.kindLabel.padded(to: 13)
        line += " " + event.requestID.terminalSafe.padded(to: 14)
        line += " " + (event.device ?? "-").terminalSafe.padded(to: 14)
        if let other = event.other {
            // A proximity event: the pair, and how far apart its devices were.
            line += " with " + other.terminalSafe.padded(to: 14)
            if let distance = event.distance {
                line += " " + "\(JSONWriter.format(roundedDistance(distance))) m apart".padded(to: 14)
            }
        } else if let distance = event.distance {
            let rounded = roundedDistance(distance)
            let place = rounded > 0 ? "out" : rounded < 0 ? "in" : "on edge"
            line += " " + "\(JSONWriter.format(abs(rounded))) m \(place)".padded(to: 14)
        }
        if let beacon = event.beacon {
            line +=
                " \(beacon.identity.major)/\(beacon.identity.minor) \(JSONWriter.format((beacon.rssi * 10).rounded() / 10)) dBm \(beacon.proximity.rawValue)"
        }
        if event.kind == .response, let response = event.response {
            line += " " + "to #\(response.respondsTo)".padded(to: 14) + "  " + response.action.terminalSafe
            if let text = response.text {
                let flat = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
                line += ": \"" + flat.terminalSafe + "\""
            }
        }
        let text = [event.content.title, event.content.body].compactMap { $0 }.joined(separator: ": ")
        var flat = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 }).terminalSafe
        while flat.hasSuffix(" ") { flat.removeLast() }
        if !flat.isEmpty { line += "  " + flat }
        if !event.content.attachments.isEmpty {
            line += "  [attachments: \(event.content.attachments.map(\.id).joined(separator: ", ").terminalSafe)]"
        }
        if let since = event.since, since != event.time {
            line += "  (since \(since.rfc3339))"
        }
        var stay: [String] = []
        if let reason = event.reason { stay.append(reason.rawValue) }
        if let visit = event.visit { stay.append("visit \(visit)") }
        if let duration = event.duration { stay.append("\(JSONWriter.format(duration.seconds)) s") }
        if !stay.isEmpty { line += "  [\(stay.joined(separator: ", "))]" }
        while line.hasSuffix(" ") { line.removeLast() }
        bytes.append(contentsOf: line.utf8)
        bytes.append(0x0A)
    }
}

extension String {
    fileprivate func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
