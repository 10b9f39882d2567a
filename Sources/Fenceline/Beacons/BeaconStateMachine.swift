/// Inside/outside of one (beacon request, device) pair (SPEC §6).
///
/// Enters on a counting sighting (after `enterDelay`, during which every sighting of the region
/// must count); exits when no counting sighting came for more than `exitTimeout`, or, with
/// `exitDelay`, when sightings stopped counting for that long. Returns actions; never reads a clock.
struct BeaconStateMachine {
    struct Rules {
        var enterDelay: TimeSpan
        var exitDelay: TimeSpan?
        var exitTimeout: TimeSpan
    }

    enum Output: Equatable {
        case enter(since: Timestamp, time: Timestamp)
        case exit(since: Timestamp, time: Timestamp, byTimeout: Bool)
    }

    enum TimerKind: Equatable {
        case enter, timeout, exit
    }

    struct Timer: Equatable {
        var kind: TimerKind
        var due: Timestamp
        var token: UInt64
    }

    struct Action: Equatable {
        var output: Output?
        var timers: [Timer] = []
        /// What confirmed `output`.
        var reason: EventReason?

        static let none = Action()
    }

    private(set) var isInside = false
    private var enterStreak: (since: Timestamp, token: UInt64)?
    private var exitStreak: (since: Timestamp, token: UInt64)?
    private var timeoutToken: UInt64?
    /// The last sighting that counted (it refreshes the timeout).
    private(set) var lastCounting: Timestamp?

    /// Whether the machine holds nothing beyond "outside".
    var isIdle: Bool { !isInside && enterStreak == nil }

    /// When the open streak towards the other side began, if one is open.
    var changingSince: Timestamp? { isInside ? exitStreak?.since : enterStreak?.since }

    /// A sighting of a beacon of the region that counts (`counts`) or not.
    mutating func sighting(counts: Bool, at time: Timestamp, rules: Rules, token: UInt64) -> Action {
        if counts { lastCounting = time }
        if !isInside {
            guard counts else {
                enterStreak = nil
                return .none
            }
            if enterStreak != nil { return .none }
            guard rules.enterDelay > .zero else {
                return enter(since: time, at: time, rules: rules, token: token, reason: .observed)
            }
            enterStreak = (time, token)
            return Action(timers: [Timer(kind: .enter, due: time.advanced(by: rules.enterDelay), token: token)])
        }
        if counts {
            exitStreak = nil
            timeoutToken = token
            return Action(timers: [Timer(kind: .timeout, due: time.advanced(by: rules.exitTimeout), token: token)])
        }
        guard let exitDelay = rules.exitDelay, exitStreak == nil else { return .none }
        guard exitDelay > .zero else {
            return exit(since: time, at: time, byTimeout: false, reason: .observed)
        }
        exitStreak = (time, token)
        return Action(timers: [Timer(kind: .exit, due: time.advanced(by: exitDelay), token: token)])
    }

    /// A timer with `token` is due.
    mutating func timerDue(_ kind: TimerKind, token: UInt64, at due: Timestamp, rules: Rules, nextToken: UInt64)
        -> Action
    {
        switch kind {
        case .enter:
            guard let streak = enterStreak, streak.token == token else { return .none }
            return enter(since: streak.since, at: due, rules: rules, token: nextToken, reason: .delayed)
        case .timeout:
            guard isInside, timeoutToken == token else { return .none }
            return exit(since: lastCounting ?? due, at: due, byTimeout: true, reason: .timeout)
        case .exit:
            guard isInside, let streak = exitStreak, streak.token == token else { return .none }
            return exit(since: streak.since, at: due, byTimeout: false, reason: .delayed)
        }
    }

    private mutating func enter(
        since: Timestamp, at time: Timestamp, rules: Rules, token: UInt64, reason: EventReason
    ) -> Action {
        isInside = true
        enterStreak = nil
        exitStreak = nil
        timeoutToken = token
        // The timeout runs from the last counting sighting, but never falls before the enter itself.
        let due = max(time, (lastCounting ?? time).advanced(by: rules.exitTimeout))
        return Action(
            output: .enter(since: since, time: time), timers: [Timer(kind: .timeout, due: due, token: token)],
            reason: reason)
    }

    private mutating func exit(since: Timestamp, at time: Timestamp, byTimeout: Bool, reason: EventReason) -> Action {
        isInside = false
        exitStreak = nil
        enterStreak = nil
        timeoutToken = nil
        return Action(output: .exit(since: since, time: time, byTimeout: byTimeout), reason: reason)
    }
}

extension BeaconStateMachine {
    /// Writes the machine's whole state to a checkpoint.
    func write(to writer: inout CheckpointWriter) {
        writer.write(isInside)
        for streak in [enterStreak, exitStreak] {
            writer.write(streak) { writer, streak in
                writer.write(streak.since)
                writer.write(streak.token)
            }
        }
        writer.write(timeoutToken) { $0.write($1) }
        writer.write(lastCounting) { $0.write($1) }
    }

    /// A machine as ``write(to:)`` wrote it.
    init(from reader: inout CheckpointReader) throws {
        isInside = try reader.bool()
        func streak(_ reader: inout CheckpointReader) throws -> (since: Timestamp, token: UInt64)? {
            try reader.optional { reader in (try reader.timestamp(), try reader.uint64()) }
        }
        enterStreak = try streak(&reader)
        exitStreak = try streak(&reader)
        timeoutToken = try reader.optional { try $0.uint64() }
        lastCounting = try reader.optional { try $0.timestamp() }
    }
}
