import Fenceline

extension NMEASentence {
    /// Knots to metres per second (one nautical mile is 1852 m).
    static let metresPerSecondPerKnot = 1852.0 / 3600.0

    /// `RMC,hhmmss.ss,A,ddmm.mm,N,dddmm.mm,E,knots,course,ddmmyy,var,E[,mode[,nav status]]`.
    /// Position, speed, course and date count only with status `A` (or `D`) and a mode other than `N`.
    static func rmc(_ fields: NMEAFields) throws(LineError) -> NMEAReport {
        try fields.require(10, for: .rmc)
        var report = NMEAReport(kind: .rmc, time: try fields.time(1, name: "RMC time"))
        guard try report.validity(status: 2, mode: 12, in: fields, valid: [UInt8(ascii: "A"), UInt8(ascii: "D")])
        else { return report }
        let latitude = try fields.angle(3, latitude: true, name: "RMC latitude")
        let longitude = try fields.angle(5, latitude: false, name: "RMC longitude")
        try report.setCoordinate(latitude: latitude, longitude: longitude, fields: fields, at: 3)
        if let knots = try fields.number(7, name: "RMC speed") {
            guard knots >= 0 else {
                throw LineError(field: "RMC speed", message: "\(knots) knots: a speed over ground is not negative")
            }
            report.speed = knots * metresPerSecondPerKnot
        }
        if let course = try fields.number(8, name: "RMC course") {
            guard (0...360).contains(course) else {
                throw LineError(field: "RMC course", message: "\(course)° is outside 0–360")
            }
            report.heading = course == 360 ? 0 : course
        }
        report.day = try fields.day(9, name: "RMC date")
        return report
    }

    /// `GGA,hhmmss.ss,ddmm.mm,N,dddmm.mm,E,quality,satellites,hdop,altitude,M,separation,M,age,station`.
    /// The position counts with a quality above 0 and 3 or more satellites in use (or no count); the
    /// altitude is above mean sea level.
    static func gga(_ fields: NMEAFields) throws(LineError) -> NMEAReport {
        try fields.require(7, for: .gga)
        var report = NMEAReport(kind: .gga, time: try fields.time(1, name: "GGA time"))
        // An empty quality says nothing either way (seen with placeholder positions).
        guard let quality = try fields.integer(6, in: 0...9, name: "GGA quality") else { return report }
        guard quality > 0 else {
            report.saysInvalid = true
            return report
        }
        // A fix needs three satellites; fewer means a held or coasting position (a Hemisphere receiver
        // sends quality 1 with 0 satellites). gpsd drops these too. Some receivers send a count per
        // constellation (SiRFstarV): their other GGA or RMC gives the position.
        if let satellites = try fields.integer(7, in: 0...999, name: "GGA satellites"), satellites < 3 {
            return report
        }
        let latitude = try fields.angle(2, latitude: true, name: "GGA latitude")
        let longitude = try fields.angle(4, latitude: false, name: "GGA longitude")
        try report.setCoordinate(latitude: latitude, longitude: longitude, fields: fields, at: 2)
        let altitude = try fields.number(9, name: "GGA altitude")
        if let unit = try fields.character(10, name: "GGA altitude unit"), unit != UInt8(ascii: "M") {
            throw LineError(field: "GGA altitude unit", message: "expected M (metres), found \"\(fields.text(10))\"")
        }
        report.altitude = report.coordinate == nil ? nil : altitude
        return report
    }

    /// `GLL,ddmm.mm,N,dddmm.mm,E,hhmmss.ss,A[,mode]`. The position counts with status `A` and a mode other
    /// than `N`; a GLL without a time (NMEA before 2.3) cannot be placed in an epoch.
    static func gll(_ fields: NMEAFields) throws(LineError) -> NMEAReport {
        try fields.require(5, for: .gll)
        var report = NMEAReport(kind: .gll, time: try fields.time(5, name: "GLL time"))
        guard try report.validity(status: 6, mode: 7, in: fields, valid: [UInt8(ascii: "A")]) else { return report }
        let latitude = try fields.angle(1, latitude: true, name: "GLL latitude")
        let longitude = try fields.angle(3, latitude: false, name: "GLL longitude")
        try report.setCoordinate(latitude: latitude, longitude: longitude, fields: fields, at: 1)
        return report
    }

    /// `GST,hhmmss.ss,rms,major,minor,orientation,σlat,σlon,σalt`: the accuracy is √(σlat² + σlon²) metres.
    static func gst(_ fields: NMEAFields) throws(LineError) -> NMEAReport {
        try fields.require(8, for: .gst)
        var report = NMEAReport(kind: .gst, time: try fields.time(1, name: "GST time"))
        let latitude = try fields.number(6, name: "GST latitude error")
        let longitude = try fields.number(7, name: "GST longitude error")
        for (value, name) in [(latitude, "GST latitude error"), (longitude, "GST longitude error")] {
            if let value, value < 0 {
                throw LineError(field: name, message: "\(value) m: a standard deviation is not negative")
            }
        }
        if let latitude, let longitude {
            report.accuracy = (latitude * latitude + longitude * longitude).squareRoot()
        }
        return report
    }

    /// `ZDA,hhmmss.ss,dd,mm,yyyy,zone hours,zone minutes`: the date, with a four-digit year.
    static func zda(_ fields: NMEAFields) throws(LineError) -> NMEAReport {
        try fields.require(5, for: .zda)
        var report = NMEAReport(kind: .zda, time: try fields.time(1, name: "ZDA time"))
        let day = try fields.integer(2, in: 1...31, name: "ZDA day")
        let month = try fields.integer(3, in: 1...12, name: "ZDA month")
        let year = try fields.integer(4, in: 1980...9999, name: "ZDA year")
        guard let day, let month, let year else { return report }
        guard day <= CivilDate.daysInMonth(year: year, month: month) else {
            throw LineError(field: "ZDA day", message: "\(year)-\(month) has no day \(day)")
        }
        report.day = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        return report
    }
}
