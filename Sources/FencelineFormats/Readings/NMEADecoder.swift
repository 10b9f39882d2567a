public import Fenceline

/// Decodes NMEA 0183 position logs into fixes of one device, one line at a time, merging the
/// sentences of each epoch as gpsd does.
///
/// **Sentences.** `RMC`, `GGA` and `GLL` give positions, `GST` accuracy and `ZDA` the date, from the
/// GNSS talkers `GP`, `GL`, `GA`, `BD`, `GB`, `GQ`, `GI`, `GN` and integrated navigation `IN`. Every
/// other sentence (`GSA`, `GSV`, `VTG`, `TXT`, proprietary `$P…`, AIS `!AIVDM`, other talkers such as
/// `EC`, an ECDIS relaying positions) is skipped once
/// its checksum, if it has one, is right. Blank lines and `#` comments (gpsd log headers) are skipped.
///
/// **Framing.** `$` and `!` are reserved characters, so a sentence starts at the last one on the
/// line: what comes before (a space, a stray byte, binary noise, a sentence cut short by the next
/// one, all seen in real logs) is dropped. A line with neither is an error: the tail of a broken
/// line, or not NMEA at all. Trailing `\r`, spaces and tabs are ignored.
///
/// **Checksum.** `*hh` (hex, either case) is verified; a mismatch is a ``LineError`` on field
/// `checksum` giving the expected and the found value, as is a `*` not followed by exactly two hex
/// digits. An `RMC`/`GGA`/`GLL`/`GST`/`ZDA` without `*hh` is an error too: in gpsd's 83 NMEA
/// captures every complete one has it, and the few without are cut short. Other sentences may lack it.
///
/// **Epochs.** Consecutive sentences with the same UTC time of day make one fix, emitted when a
/// sentence with another time arrives (or at ``finish()``), with the line of its first sentence.
/// Times are compared at the precision of the coarser one (`200619.295` joins `200619.30`, and the
/// fix takes the coarser time). Sentences without a time, and `ZDA`, do not end an epoch. The
/// position is that of the sentence with the most decimals, the latest on a tie; speed (knots to
/// m/s) and course from `RMC`, altitude above mean sea level from `GGA`, and horizontal accuracy
/// √(σlat² + σlon²) (DRMS, metres) from `GST`.
///
/// **Validity.** A sentence's position counts with `RMC` status `A` (or `D`), `GGA` quality above 0
/// and at least 3 satellites in use (when given), `GLL` status `A`, and never with FAA mode `N`. Any
/// sentence saying outright that there is no fix (status `V`, quality 0, mode `N`) voids its epoch:
/// receivers in dead reckoning or demo mode send a "valid" GGA beside an `RMC` with `V`. The other
/// fields of a sentence without a fix are not read (cold receivers fill them with `8960.0000`).
/// An epoch is emitted only with a valid position and a known date.
///
/// **Date.** From a valid `RMC` (`ddmmyy`; `80`–`99` are 1980–1999 and `00`–`79` are 2000–2079, as
/// gpsd) or a `ZDA`, carried to later epochs. When the time of day goes back by more than 12 hours
/// without a new date (`23:59:59` then `00:00:01`), the carried date moves on one day; a smaller step
/// back (two logs spliced) keeps it. Epochs before any date is known are dropped without error. No
/// GPS week roll-over correction is made: the date is the receiver's.
///
/// **Errors.** A bad sentence (checksum, a malformed or out-of-range field, named as in
/// `RMC latitude`) throws and changes nothing: the held epoch stays.
public struct NMEADecoder: Sendable {
    private let device: String
    private var epoch: Epoch?
    private var calendar: CarriedDate?

    /// `device`: the id every fix gets.
    public init(device: String) {
        self.device = device
    }

    /// Feeds one line (without its newline; may end in \r). Returns the fix of an epoch that this line
    /// completed (i.e. the previously held epoch, once a sentence with a different UTC time arrives),
    /// together with the 1-based line number where that epoch's first sentence was. Returns nil otherwise.
    /// Throws LineError for a bad sentence (bad checksum, malformed/out-of-range field) — the held epoch is kept.
    public mutating func decode(_ line: UnsafeBufferPointer<UInt8>, lineNumber: Int) throws(LineError) -> (
        reading: Reading, line: Int
    )? {
        guard let report = try NMEASentence.parse(line), let time = report.time else { return nil }
        calendar = CarriedDate.advance(calendar, to: time.microseconds, reportedDay: report.day)
        if report.kind == .zda {
            // A date, not part of an epoch: some receivers stamp it a second or two off the others.
            if let day = report.day, let held = epoch, held.time.matches(time) { epoch?.reportedDay = day }
            return nil
        }
        var completed: (reading: Reading, line: Int)?
        if let held = epoch, !held.time.matches(time) {
            completed = held.fix(device: device)
            epoch = nil
        }
        if epoch == nil {
            epoch = Epoch(time: time, line: lineNumber, carriedDay: calendar?.day)
        }
        epoch?.merge(report)
        return completed
    }

    /// At end of input: the last held epoch's fix, if any.
    public mutating func finish() -> (reading: Reading, line: Int)? {
        defer {
            epoch = nil
            calendar = nil
        }
        return epoch?.fix(device: device)
    }
}

extension NMEADecoder {
    /// The date known so far and the time of day it was last seen at, to notice midnight.
    private struct CarriedDate {
        var day: Int
        var timeOfDay: Int64

        static let halfDay: Int64 = 12 * 3600 * 1_000_000

        /// The date after a sentence at `timeOfDay`, which reports `reportedDay` if it is a valid `RMC` or a `ZDA`.
        static func advance(_ carried: CarriedDate?, to timeOfDay: Int64, reportedDay: Int?) -> CarriedDate? {
            if let reportedDay { return CarriedDate(day: reportedDay, timeOfDay: timeOfDay) }
            guard var carried else { return nil }
            if timeOfDay < carried.timeOfDay - halfDay {
                carried.day += 1
                carried.timeOfDay = timeOfDay
            } else if timeOfDay > carried.timeOfDay {
                carried.timeOfDay = timeOfDay
            }
            return carried
        }
    }

    /// The sentences of one UTC time of day, merged.
    private struct Epoch {
        var time: NMEATime
        let line: Int
        let carriedDay: Int?
        var reportedDay: Int?
        var coordinate: Coordinate?
        var coordinateDigits = -1
        var saysInvalid = false
        var speed: Double?
        var heading: Double?
        var altitude: Double?
        var accuracy: Double?

        init(time: NMEATime, line: Int, carriedDay: Int?) {
            self.time = time
            self.line = line
            self.carriedDay = carriedDay
        }

        mutating func merge(_ report: NMEAReport) {
            if let reported = report.time { time = time.coarsened(by: reported) }
            if let day = report.day { reportedDay = day }
            // The most precise position, the latest on a tie (as gpsd, where each sentence overwrites).
            if let coordinate = report.coordinate, report.coordinateDigits >= coordinateDigits {
                self.coordinate = coordinate
                coordinateDigits = report.coordinateDigits
            }
            saysInvalid = saysInvalid || report.saysInvalid
            if let speed = report.speed { self.speed = speed }
            if let heading = report.heading { self.heading = heading }
            if let altitude = report.altitude { self.altitude = altitude }
            if let accuracy = report.accuracy { self.accuracy = accuracy }
        }

        func fix(device: String) -> (reading: Reading, line: Int)? {
            guard !saysInvalid, let coordinate, let day = reportedDay ?? carriedDay else { return nil }
            let time = Timestamp(microseconds: Int64(day) * 86_400_000_000 + time.microseconds)
            let fix = Fix(
                device: device, time: time, coordinate: coordinate, accuracy: accuracy, speed: speed,
                heading: heading, altitude: altitude)
            return (.fix(fix), line)
        }
    }
}
