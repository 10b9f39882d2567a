public import ArgumentParser
import Fenceline
import FencelineFormats

extension EventFormat: ExpressibleByArgument {}
extension InputFormat: ExpressibleByArgument {}
extension ClockMode: ExpressibleByArgument {}

/// A time on the command line: RFC 3339 or Unix seconds.
struct TimeArgument: ExpressibleByArgument {
    var timestamp: Timestamp

    init?(argument: String) {
        if let time = Timestamp(rfc3339: argument) {
            timestamp = time
        } else if let seconds = Double(argument), seconds.isFinite, abs(seconds) < 9e12 {
            timestamp = Timestamp(seconds: seconds)
        } else {
            return nil
        }
    }

    static var defaultValueDescription: String { "RFC 3339 time or Unix seconds" }
}
