/// Weekly windows that gate when a trigger may notify (SPEC §7).
public struct Schedule: Hashable, Sendable {
    /// The IANA zone the windows are read in.
    public var timeZone: String
    /// The windows; a notification may fire inside any of them.
    public var windows: [Window]

    /// One weekly window `[start, end)`; `end` before `start` runs overnight into the next day.
    public struct Window: Hashable, Sendable {
        /// Days the window starts on, 1 = Sunday … 7 = Saturday.
        public var days: Set<Int>
        /// Minutes after local midnight the window opens.
        public var start: Int
        /// Minutes after local midnight the window closes.
        public var end: Int

        /// Creates a window.
        public init(days: Set<Int>, start: Int, end: Int) {
            self.days = days
            self.start = start
            self.end = end
        }
    }

    /// Creates a schedule.
    public init(timeZone: String, windows: [Window]) {
        self.timeZone = timeZone
        self.windows = windows
    }
}
