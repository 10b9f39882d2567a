import Fenceline
import TestSupport
import Testing

/// SPEC §8's action responses through the library: found by seq or by request and device,
/// checked against the category, recorded on the delivered entry, kept by a checkpoint.
@Suite struct ResponseTests {
    typealias F = Fixtures

    static let arrival = NotificationCategory(
        id: "arrival",
        actions: [
            NotificationAction(id: "ack", title: "OK", options: ["foreground"]),
            NotificationAction(
                id: "reply", title: "Reply", textInput: NotificationAction.TextInput(button: "Send", placeholder: "")),
        ], options: ["customDismissAction"])

    /// An engine whose `gate` (category `arrival`) has notified d1 of an enter, released as seq 1.
    static func engine() throws -> (Engine, [Event]) {
        var gate = F.circle(hysteresis: .naive)
        gate.content = NotificationContent(title: "Gate", category: "arrival")
        let engine = try Engine(catalog: Catalog(categories: [arrival], requests: [gate]))
        var events = engine.process(F.fix(0, east: 300))
        events += engine.process(F.fix(1, east: 0))
        events += engine.advance(to: F.at(1))
        return (engine, events)
    }

    @Test func anAnswerIsAnEventAndStaysOnTheNotification() throws {
        let (engine, events) = try Self.engine()
        #expect(events.map(\.sequence) == [1])
        var out = try engine.respond(.init(target: .sequence(1), action: "reply", text: "on my way"), at: F.at(5))
        out += engine.advance(to: F.at(6))
        let answer = try #require(out.first)
        #expect(answer.kind == .response && answer.sequence == 2 && answer.requestID == "gate" && answer.device == "d1")
        #expect(answer.response?.respondsTo == 1 && answer.response?.text == "on my way")
        #expect(engine.deliveredNotifications.first?.response?.action == "reply")
        // By request and device: the latest of the pair; the action's options come along.
        out = try engine.respond(.init(target: .latest(request: "gate", device: "d1"), action: "ack"))
        out += engine.advance(to: F.at(7))
        #expect(out.first?.response?.options == ["foreground"])
        #expect(engine.deliveredNotifications.first?.response?.action == "ack")
    }

    @Test(arguments: [
        (NotificationResponse(target: .sequence(2), action: "ack"), ResponseRefusal.Code.notDelivered, "seq"),
        (.init(target: .latest(request: "gate", device: "d9"), action: "ack"), .notDelivered, "request"),
        (.init(target: .latest(request: "other", device: "d1"), action: "ack"), .notDelivered, "request"),
        (.init(target: .sequence(1), action: "unload"), .invalidAction, "action"),
        (.init(target: .sequence(1), action: "ack", text: "x"), .invalidAction, "text"),
        (.init(target: .sequence(1), action: "default", text: "x"), .invalidAction, "text"),
    ])
    func refusalsNameTheField(response: NotificationResponse, code: ResponseRefusal.Code, field: String) throws {
        let (engine, _) = try Self.engine()
        #expect(throws: ResponseRefusal.self) { try engine.respond(response) }
        do {
            _ = try engine.respond(response)
        } catch {
            #expect(error.code == code && error.field == field, "\(error)")
        }
        #expect(engine.deliveredNotifications.first?.response == nil)
    }

    @Test func dismissNeedsTheCategorysCustomDismissAction() throws {
        let (engine, _) = try Self.engine()
        _ = try engine.respond(.init(target: .sequence(1), action: "dismiss"))
        var plain = F.circle("plain", hysteresis: .naive)
        plain.content = NotificationContent(title: "Plain")
        try engine.add(plain)
        _ = engine.process(F.fix(10, east: 300))
        _ = engine.process(F.fix(11, east: 0))
        let events = engine.advance(to: F.at(12))
        let seq = try #require(events.first { $0.requestID == "plain" }?.sequence)
        #expect(throws: ResponseRefusal.self) { try engine.respond(.init(target: .sequence(seq), action: "dismiss")) }
        _ = try engine.respond(.init(target: .sequence(seq), action: "default"))
    }

    @Test func aRemovedNotificationCannotBeAnswered() throws {
        let (engine, _) = try Self.engine()
        engine.removeDeliveredNotifications(withIdentifiers: ["gate"])
        #expect(throws: ResponseRefusal.self) { try engine.respond(.init(target: .sequence(1), action: "ack")) }
    }

    /// A notification released by the response's own clock move can be answered at once, and a
    /// refused answer's events come back with the refusal.
    @Test func theInstantBeforeTheAnswerIsReleasedFirst() throws {
        var gate = F.circle(hysteresis: .naive)
        gate.content = NotificationContent(title: "Gate", category: "arrival")
        let engine = try Engine(catalog: Catalog(categories: [Self.arrival], requests: [gate]))
        _ = engine.process(F.fix(0, east: 300))
        #expect(engine.process(F.fix(1, east: 0)).isEmpty, "the enter's instant is still open")
        let out = try engine.respond(NotificationResponse(target: .sequence(1), action: "ack"), at: F.at(3))
        #expect(out.map(\.kind) == [.enter])
        do {
            _ = try engine.respond(.init(target: .sequence(1), action: "x"), at: F.at(4))
            Issue.record("an unknown action was taken")
        } catch {
            #expect(error.released.map(\.kind) == [.response], "the answer at 3 leaves with the refusal at 4")
        }
        #expect(engine.advance(to: F.at(5)).isEmpty)
    }

    /// Each firing is delivered (SPEC §8): an answer in the instant of its notification, at the
    /// clock or stamped with it, closes that instant as a tick does and finds the notification,
    /// by seq or by request and device. Its own event leaves when the instant closes.
    @Test func anAnswerInTheInstantOfItsNotificationFindsIt() throws {
        for target in [NotificationResponse.Target.sequence(1), .latest(request: "gate", device: "d1")] {
            for stamped in [false, true] {
                var gate = F.circle(hysteresis: .naive)
                gate.content = NotificationContent(title: "Gate", category: "arrival")
                let engine = try Engine(catalog: Catalog(categories: [Self.arrival], requests: [gate]))
                _ = engine.process(F.fix(0, east: 300))
                #expect(engine.process(F.fix(1, east: 0)).isEmpty, "the enter's instant is still open")
                let out = try engine.respond(.init(target: target, action: "ack"), at: stamped ? F.at(1) : nil)
                #expect(out.map(\.kind) == [.enter] && out.map(\.sequence) == [1], "\(target)")
                let answer = engine.advance(to: F.at(2))
                #expect(answer.map(\.kind) == [.response] && answer.first?.response?.respondsTo == 1)
                #expect(answer.first?.time == F.at(1) && answer.first?.sequence == 2)
            }
        }
    }

    /// The answer's close of its instant fires the timers due at it, refused or not, as a tick
    /// does: a later fix of that second comes after them.
    @Test func anAnswerClosesItsInstantAsATickDoes() throws {
        var hysteresis = Hysteresis.naive
        hysteresis.exitDelay = TimeSpan(seconds: 5)
        var gate = F.circle(hysteresis: hysteresis)
        gate.content = NotificationContent(title: "Gate", category: "arrival")
        let engine = try Engine(catalog: Catalog(categories: [Self.arrival], requests: [gate]))
        _ = engine.process(F.fix(0, east: 0))  // silent first fix inside
        _ = engine.process(F.fix(1, east: 300))  // an exit streak: due at 6
        _ = engine.process(F.fix(6, east: 300))
        do {
            _ = try engine.respond(.init(target: .sequence(9), action: "ack"))
            Issue.record("an answer to nothing was taken")
        } catch {
            #expect(error.released.map(\.kind) == [.exit], "the exit due at 6 fired with the close")
        }
        // Applied before the timer, this fix would have cancelled the exit; after it, it enters.
        #expect(engine.process(F.fix(6, east: 0)).isEmpty)
        #expect(engine.advance(to: F.at(7)).map(\.kind) == [.enter])
    }

    /// Beyond its device's newest `limit` a notification is gone, whether or not the log has
    /// compacted since (a cut run compacts at the checkpoint, an uncut one may not have).
    @Test func aNotificationBeyondTheDeliveredLimitCannotBeAnswered() throws {
        var gate = F.circle(hysteresis: .naive)
        gate.content = NotificationContent(title: "Gate", category: "arrival")
        let catalog = Catalog(categories: [Self.arrival], requests: [gate])
        let engine = try Engine(catalog: catalog, configuration: .init(deliveredLimit: 1))
        _ = engine.process(F.fix(0, east: 300))
        _ = engine.process(F.fix(1, east: 0))  // enter: seq 1
        _ = engine.process(F.fix(2, east: 300))  // exit: seq 2, which pushes seq 1 out
        _ = engine.advance(to: F.at(3))
        #expect(throws: ResponseRefusal.self) { try engine.respond(.init(target: .sequence(1), action: "ack")) }
        _ = try engine.respond(.init(target: .sequence(2), action: "ack"))
    }

    /// Before the first clock nothing is delivered: an answer is refused at once, its events (none)
    /// handed back with the refusal.
    @Test func anAnswerBeforeAnyReadingIsRefusedAtOnce() throws {
        let (engine, _) = try Self.engine()
        let fresh = try Engine(catalog: Catalog(categories: [Self.arrival], requests: []))
        do {
            _ = try fresh.respond(.init(target: .sequence(1), action: "default"))
            Issue.record("an answer before any reading was taken")
        } catch {
            #expect(error.code == .notDelivered && error.released.isEmpty)
        }
        // A refused answer's clock move still releases the instants before it, in the refusal.
        _ = engine.process(F.fix(20, east: 300))  // exit at 20, its instant open
        do {
            _ = try engine.respond(.init(target: .sequence(1), action: "nope"), at: F.at(30))
            Issue.record("an unknown action was taken")
        } catch {
            #expect(error.code == .invalidAction && error.released.map(\.kind) == [.exit])
        }
    }

    @Test func aCheckpointKeepsAnswersAndSeqs() throws {
        let (engine, _) = try Self.engine()
        _ = try engine.respond(.init(target: .sequence(1), action: "reply", text: "x"), at: F.at(2))
        _ = engine.finish(until: F.at(3), keepingHeldReadings: true)
        let resumed = try Engine(resuming: engine.checkpoint())
        #expect(resumed.deliveredNotifications == engine.deliveredNotifications)
        #expect(resumed.deliveredNotifications.first?.response?.text == "x")
        _ = try resumed.respond(.init(target: .sequence(1), action: "ack"), at: F.at(4))
        let last: [Event] = resumed.finish()
        #expect(last.map(\.kind) == [EventKind.response])
    }
}
