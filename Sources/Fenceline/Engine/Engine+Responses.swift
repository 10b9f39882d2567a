/// Why a response was refused (SPEC §8: a bad line in a stream, 404 or 422 in the service).
public struct ResponseRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of refusal it is.
    public enum Code: String, Hashable, Sendable {
        /// No delivered notification has that `seq`, or that request and device (never, or removed).
        case notDelivered
        /// The action is not one the notification offers, or `text` is given where it cannot be.
        case invalidAction
    }

    /// What kind of refusal it is.
    public var code: Code
    /// The field at fault (`seq`, `request`, `action`, `text`).
    public var field: String
    /// What is wrong, for a person.
    public var message: String
    /// The events released by the record's move of the clock, which a refused answer makes too
    /// (``Engine/respond(_:at:)`` hands them out here).
    public var released: [Event] = []

    /// Creates a refusal.
    public init(_ code: Code, field: String, _ message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    /// An answer before anything could have been delivered: the clock is not set yet.
    package static let nothingDelivered = ResponseRefusal(
        .notDelivered, field: "seq", "no notification has been delivered yet")

    public var description: String { message }
}

extension Engine {
    /// What became of a `respond` control record the engine applied: its response event, or
    /// why it was refused. Drained by ``takeResponseOutcomes()``.
    package struct ResponseOutcome {
        package var response: NotificationResponse
        package var refusal: ResponseRefusal?
        /// The `response` event, not numbered yet (it leaves when its instant closes).
        package var event: Event?
    }

    /// The most outcomes kept undrained: a library caller feeding records through ``process(_:)``
    /// may never ask for them.
    static let keptResponseOutcomes = 4096

    /// The outcomes of the `respond` records applied since the last call, in the order applied,
    /// so that a caller feeding records through ``process(_:)`` can report refused ones.
    package func takeResponseOutcomes() -> [ResponseOutcome] {
        defer { responseOutcomes = [] }
        return responseOutcomes
    }

    /// Applies a user's answer to a delivered notification (SPEC §8), as a `respond` control
    /// record stamped `time` (`nil`: at the clock) does, and returns the events released by then.
    ///
    /// The clock moves to `time` and the instant there closes (as a `tick` closes it) even when
    /// the answer is refused, as for the record: which notification a `seq` names depends on the
    /// timers due up to it. With a reorder window the answer waits like any record and is not
    /// checked here.
    /// - Throws: ``ResponseRefusal`` when no such notification is delivered or it does not offer
    ///   the action, with the events released all the same in its `released`.
    public func respond(_ response: NotificationResponse, at time: Timestamp? = nil) throws(ResponseRefusal) -> [Event]
    {
        let released = process(.control(ControlRecord(time: time, operation: .respond(response))))
        let outcome = takeResponseOutcomes().last { $0.response == response }
        if var refusal = outcome?.refusal {
            refusal.released = released
            throw refusal
        }
        return released
    }

    /// Applies a user's answer at the clock (already moved to the record's time, the timers due
    /// at it fired): finds the delivered notification, checks the action against its category,
    /// records the answer on it and emits a `response` event (SPEC §8).
    ///
    /// Which notification a `seq` names is known once its instant is released, so the events of
    /// every instant up to the clock are released first (into the next release, in their
    /// order): a response may answer an event of its own instant. Its own event waits for the
    /// instant to close, with any later events of that instant.
    func applyResponse(_ response: NotificationResponse) {
        guard let time = clock else { return }
        releaseAhead(through: time)
        do throws(ResponseRefusal) {
            let position = try deliveredPosition(for: response.target)
            let notification = delivered[position]
            let options = try actionOptions(for: response, answering: notification)
            let report = ResponseReport(
                respondsTo: notification.sequence, action: response.action, text: response.text, options: options,
                time: time)
            delivered.record(report, at: position)
            // Not a notification: it takes no delivered entry and no schedule mutes it.
            let event = Event(
                time: time, requestID: notification.requestID, device: notification.device,
                trigger: notification.trigger, kind: .response, response: report)
            events.append(event, timerBound: firingBound)
            if let tracer, event.requestID == tracer.request, event.device == tracer.device {
                tracer.delivered.append(event)
                traceResponse(report, tracer: tracer)
            }
            noteOutcome(ResponseOutcome(response: response, refusal: nil, event: event))
        } catch {
            noteOutcome(ResponseOutcome(response: response, refusal: error, event: nil))
        }
    }

    func noteOutcome(_ outcome: ResponseOutcome) {
        if responseOutcomes.count >= Self.keptResponseOutcomes { responseOutcomes.removeFirst() }
        responseOutcomes.append(outcome)
    }

    /// Releases (and numbers) the events stamped at or before `time` now, for the next release to
    /// hand out.
    private func releaseAhead(through time: Timestamp) {
        let (released, orders) = events.release(before: time, inclusive: true)
        guard !released.isEmpty else { return }
        delivered.number(orders: orders, events: released)
        releasedAhead += released
    }

    private func deliveredPosition(for target: NotificationResponse.Target) throws(ResponseRefusal) -> Int {
        switch target {
        case .sequence(let sequence):
            guard let position = delivered.position(ofSequence: sequence) else {
                throw ResponseRefusal(
                    .notDelivered, field: "seq",
                    "no delivered notification has seq \(sequence) (never delivered, removed, or beyond the delivered limit)"
                )
            }
            return position
        case .latest(let request, let device):
            // A device never seen has nothing delivered.
            let id = device.map { devices.id(of: $0) } ?? -1
            guard let id, let position = delivered.latestPosition(request: request, device: id) else {
                let whose = device.map { "device \"\($0)\"" } ?? "no device"
                throw ResponseRefusal(
                    .notDelivered, field: "request",
                    "no delivered notification of request \"\(request)\" for \(whose)")
            }
            return position
        }
    }

    /// The options of the action `response` takes on `notification`, after checking it may.
    private func actionOptions(
        for response: NotificationResponse, answering notification: Event
    ) throws(ResponseRefusal) -> [String] {
        // The category as it is now, for the actions and for customDismissAction alike.
        let category = notification.content.category.flatMap { categories[$0] }
        let actions = category?.actions ?? []
        let offered = actions.map(\.id)
        func noText() throws(ResponseRefusal) {
            guard response.text == nil else {
                throw ResponseRefusal(
                    .invalidAction, field: "text",
                    "text is only for an action with textInput, not \"\(response.action)\"")
            }
        }
        switch response.action {
        case NotificationResponse.defaultAction:
            try noText()
            return []
        case NotificationResponse.dismissAction:
            guard category?.options.contains("customDismissAction") == true else {
                let name = notification.content.category.map { "category \"\($0)\"" } ?? "the notification's content"
                throw ResponseRefusal(
                    .invalidAction, field: "action",
                    "\"dismiss\" needs a category with the customDismissAction option; \(name) has none")
            }
            try noText()
            return []
        default:
            guard let action = actions.first(where: { $0.id == response.action }) else {
                let dismiss = category?.options.contains("customDismissAction") == true ? ["dismiss"] : []
                let known = (["default"] + offered + dismiss).map { "\"\($0)\"" }.joined(separator: ", ")
                let name = notification.content.category.map { ", category \"\($0)\"" } ?? ""
                throw ResponseRefusal(
                    .invalidAction, field: "action",
                    "unknown action \"\(response.action)\" for seq \(notification.sequence) (request \"\(notification.requestID)\"\(name)); expected one of \(known)"
                )
            }
            if action.textInput == nil { try noText() }
            return action.options
        }
    }
}
