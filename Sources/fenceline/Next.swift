import ArgumentParser
import Fenceline
import FencelineFormats
import Foundation
import Logging

/// `fenceline next`: each pending request's next trigger date, like `nextTriggerDate()`.
struct Next: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print each request's next trigger date.",
        discussion: """
            Adds the catalog's requests at --after (default: now) and prints, for each, when it next \
            fires: the time-interval or calendar date (--after itself for one already due, which \
            fires as it is added), or null for region and beacon requests (they fire on readings) \
            and for a time request that will not fire again by its expires. \
            Calendar dates follow the DST rules of SPEC §7. As NDJSON by default, or aligned text \
            with the local time in the trigger's zone.

            Examples:
              fenceline next catalog.json --after 2026-03-07T12:00:00Z
              fenceline next catalog.json --format text
            """
    )

    @OptionGroup var catalogLimit: CatalogLimit

    @Argument(help: ArgumentHelp("The catalog.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The instant to look from (RFC 3339 or Unix seconds; default: now).", valueName: "time"))
    var after: TimeArgument?

    /// What `next` writes: dates, not events, so only these two of `run`'s formats apply.
    enum Format: String, CaseIterable, ExpressibleByArgument {
        case ndjson, text
    }

    @Option(
        help: ArgumentHelp("How to write the dates: one JSON object per line, or aligned text.", valueName: "format"))
    var format: Format = .ndjson

    func run() async throws {
        let decoded = try loadCatalog(path: file, decoder: CatalogDecoder(), limit: catalogLimit)
        let engine = try Engine(catalog: decoded.catalog, logger: Logger(label: "fenceline"))
        let start = after?.timestamp ?? Timestamp(seconds: Date().timeIntervalSince1970)
        // A request due before `start` fires as it is added, at `start` (SPEC §7: at the next
        // clock move), which is then its next trigger date.
        let firedAtStart = Set(engine.advance(to: start).filter { $0.time == start }.map(\.requestID))
        var output = ""
        for request in decoded.catalog.requests {
            let next = firedAtStart.contains(request.id) ? start : engine.nextTriggerDate(forRequest: request.id)
            let pending = engine.pendingRequests.contains { $0.id == request.id }
            switch format {
            case .text:
                let id = request.id.terminalSafe
                var line = id.padding(toLength: max(14, id.count), withPad: " ", startingAt: 0)
                line += "  " + request.trigger.kind.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
                if let next {
                    line += "  \(next.rfc3339)"
                    if case .calendar(let calendar) = request.trigger {
                        line += "  (\(Self.local(next, zone: calendar.timeZone)))"
                    }
                } else {
                    // A time trigger with no date will not fire again (used up, or expired first).
                    let timed: Bool
                    switch request.trigger {
                    case .timeInterval, .calendar: timed = true
                    case .region, .beacon, .proximity: timed = false
                    }
                    line += pending && !timed ? "  on readings" : "  never"
                }
                output += line + "\n"
            case .ndjson:
                var writer = JSONWriter()
                writer.raw("{\"request\":")
                writer.string(request.id)
                writer.raw(",\"trigger\":\"\(request.trigger.kind.rawValue)\",\"next\":")
                if let next { writer.time(next) } else { writer.raw("null") }
                writer.raw("}\n")
                output += String(decoding: writer.bytes, as: UTF8.self)
            }
        }
        OutputFile.standardOutput.write(output)
    }

    /// The instant as a local wall time in `zone`, for people.
    static func local(_ time: Timestamp, zone: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "EEE yyyy-MM-dd HH:mm:ss zzz"
        return formatter.string(from: Date(timeIntervalSince1970: time.seconds))
    }
}
