/// The hysteresis of one (region request, device) pair (SPEC §5, "Time", "Initial state", "Dwell").
///
/// Feeds on classified fixes and fired timers and answers with actions: an event to emit and
/// timers to schedule. It never reads a clock; due times come back through ``confirmationDue``
/// and ``dwellDue``. Timer tokens come from the caller and are unique per engine, so a timer left
/// over from a cancelled streak can never confirm a later one.
struct RegionStateMachine {
    /// The request's timing rules.
    struct Rules: Equatable {
        var enterDelay: TimeSpan
        var exitDelay: TimeSpan
        var minFixes: Int
        /// `nil` when the request does not notify dwells.
        var dwell: TimeSpan?
    }

    /// How one fix relates to the fence under the request's accuracy mode.
    enum Condition {
        case enter, exit, band
    }

    /// What the machine reports.
    enum Output: Equatable {
        case enter(since: Timestamp, time: Timestamp)
        case exit(since: Timestamp, time: Timestamp)
        case state(inside: Bool, time: Timestamp)
        case dwell(time: Timestamp)
    }

    /// A timer to schedule.
    struct Timer: Equatable {
        var due: Timestamp
        var token: UInt64
    }

    /// What to do after an input.
    struct Action: Equatable {
        var output: Output?
        var confirmation: Timer?
        var dwell: Timer?
        /// What confirmed `output` (none for `state`).
        var reason: EventReason?

        static let none = Action()
    }

    private enum Streak {
        case none
        /// Fixes meeting the condition towards the other side since `since`.
        case pending(since: Timestamp, fixes: Int, token: UInt64)
    }

    private(set) var isInside: Bool
    private var streak: Streak = .none
    private var dwellToken: UInt64?

    /// The open streak towards the other side: its first fix's time and how many fixes met it.
    var pendingStreak: (since: Timestamp, fixes: Int)? {
        guard case .pending(let since, let fixes, _) = streak else { return nil }
        return (since, fixes)
    }

    /// Whether a dwell timer of the current visit is running.
    var awaitsDwell: Bool { dwellToken != nil }

    /// Whether the dwell timer with `token` belongs to the visit going on (an exit voids it).
    func awaitsDwell(token: UInt64) -> Bool { dwellToken == token }

    /// Whether the machine holds nothing beyond "outside": such a pair needs no stored state.
    var isIdle: Bool {
        if isInside || dwellToken != nil { return false }
        if case .none = streak { return true }
        return false
    }

    /// A machine for a device already known to be outside.
    init() {
        isInside = false
    }

    /// The machine set by a device's first usable fix: inside exactly when it meets the enter
    /// condition, at once and without delays.
    static func first(
        _ condition: Condition, at time: Timestamp, policy: InitialPolicy, rules: Rules, token: UInt64
    ) -> (RegionStateMachine, Action) {
        var machine = RegionStateMachine()
        machine.isInside = condition == .enter
        switch policy {
        case .silent:
            return (machine, .none)
        case .state:
            return (machine, Action(output: .state(inside: machine.isInside, time: time)))
        case .enter:
            guard machine.isInside else { return (machine, .none) }
            var action = Action(output: .enter(since: time, time: time), reason: .initial)
            action.dwell = machine.startDwell(at: time, rules: rules, token: token)
            return (machine, action)
        }
    }

    /// Applies one fix. A fix that does not meet the condition towards the other side (a band
    /// fix included) cancels the streak; one that does extends it, and confirms the transition
    /// once `minFixes` fixes have met it and the delay has passed. A fix stamped exactly at the
    /// delay's end leaves confirmation to the timer, so later evidence of that instant still counts.
    mutating func fix(_ condition: Condition, at time: Timestamp, rules: Rules, token: UInt64) -> Action {
        let wanted: Condition = isInside ? .exit : .enter
        guard condition == wanted else {
            cancelStreak()
            return .none
        }
        let delay = isInside ? rules.exitDelay : rules.enterDelay
        var action = Action.none
        let since: Timestamp
        let fixes: Int
        switch streak {
        case .none:
            since = time
            fixes = 1
            streak = .pending(since: time, fixes: 1, token: token)
            if delay > .zero { action.confirmation = Timer(due: time.advanced(by: delay), token: token) }
        case .pending(let start, let count, let pendingToken):
            since = start
            fixes = count + 1
            streak = .pending(since: start, fixes: fixes, token: pendingToken)
        }
        if Self.confirms(fixes: fixes, since: since, at: time, delay: delay, minFixes: rules.minFixes) {
            let confirmed = confirm(since: since, at: time, rules: rules, token: token)
            action.output = confirmed.output
            action.dwell = confirmed.dwell
            action.reason = .observed
        }
        return action
    }

    /// What ``fix(_:at:rules:token:)`` does with a fix that extends an open streak without
    /// confirming it (fewer than `minFixes`, or not past `delay`, the streak's side's delay):
    /// counts the fix. Returns `false`, changing nothing, when there is no open streak or the fix
    /// would confirm it; `fix` must handle those.
    @inline(__always)
    mutating func extendStreak(at time: Timestamp, delay: TimeSpan, minFixes: Int) -> Bool {
        guard case .pending(let since, let fixes, let token) = streak else { return false }
        if Self.confirms(fixes: fixes + 1, since: since, at: time, delay: delay, minFixes: minFixes) { return false }
        streak = .pending(since: since, fixes: fixes + 1, token: token)
        return true
    }

    /// Whether a streak open `since`, with `fixes` fixes counted (the one at `time` included),
    /// confirms at that fix. A fix exactly at the delay's end does not: the timer confirms then.
    @inline(__always)
    static func confirms(fixes: Int, since: Timestamp, at time: Timestamp, delay: TimeSpan, minFixes: Int) -> Bool {
        fixes >= minFixes && (delay == .zero || time > since.advanced(by: delay))
    }

    /// What ``fix(_:at:rules:token:)`` does with a fix that does not meet the condition towards
    /// the other side: the streak ends, and nothing else happens.
    @inline(__always)
    mutating func cancelStreak() {
        streak = .none
    }

    /// The delay of the streak started with `token` has passed at `due`.
    mutating func confirmationDue(token: UInt64, at due: Timestamp, rules: Rules, dwellToken: UInt64) -> Action {
        guard case .pending(let since, let fixes, let pendingToken) = streak, pendingToken == token,
            fixes >= rules.minFixes
        else { return .none }
        var action = confirm(since: since, at: due, rules: rules, token: dwellToken)
        action.reason = .delayed
        return action
    }

    /// The dwell timer with `token` is due; it fires only if the visit it belongs to goes on.
    ///
    /// "If no exit was confirmed by then": an exit streak whose confirmation falls due at this same
    /// instant (its delay ends now and it has its fixes) is an exit confirmed by then, so it wins
    /// even though its timer, scheduled later, has not fired yet.
    mutating func dwellDue(token: UInt64, at due: Timestamp, rules: Rules) -> Action {
        guard isInside, dwellToken == token else { return .none }
        dwellToken = nil
        if case .pending(let since, let fixes, _) = streak, fixes >= rules.minFixes,
            since.advanced(by: rules.exitDelay) <= due
        {
            return .none
        }
        return Action(output: .dwell(time: due), reason: .delayed)
    }

    private mutating func confirm(since: Timestamp, at time: Timestamp, rules: Rules, token: UInt64) -> Action {
        streak = .none
        isInside.toggle()
        if isInside {
            var action = Action(output: .enter(since: since, time: time))
            action.dwell = startDwell(at: time, rules: rules, token: token)
            return action
        }
        dwellToken = nil
        return Action(output: .exit(since: since, time: time))
    }

    private mutating func startDwell(at time: Timestamp, rules: Rules, token: UInt64) -> Timer? {
        guard let dwell = rules.dwell else { return nil }
        dwellToken = token
        return Timer(due: time.advanced(by: dwell), token: token)
    }
}

extension RegionStateMachine {
    /// Writes the machine's whole state to a checkpoint.
    func write(to writer: inout CheckpointWriter) {
        writer.write(isInside)
        switch streak {
        case .none: writer.write(UInt8(0))
        case .pending(let since, let fixes, let token):
            writer.write(UInt8(1))
            writer.write(since)
            writer.write(fixes)
            writer.write(token)
        }
        writer.write(dwellToken) { $0.write($1) }
    }

    /// A machine as ``write(to:)`` wrote it.
    init(from reader: inout CheckpointReader) throws {
        isInside = try reader.bool()
        switch try reader.byte() {
        case 0: streak = .none
        case 1:
            streak = .pending(
                since: try reader.timestamp(), fixes: try reader.int(in: 0...Int(Int32.max), "a streak's fixes"),
                token: try reader.uint64())
        case let tag: throw reader.damaged("streak kind \(tag) is unknown")
        }
        dwellToken = try reader.optional { try $0.uint64() }
    }
}
