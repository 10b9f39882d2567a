import Fenceline
import Foundation

/// Control records (SPEC §3.3): rare, so read through the full JSON tree and the catalog decoder.
extension NDJSONReadingDecoder {
    func decodeControl(_ line: UnsafeBufferPointer<UInt8>) throws -> Reading {
        let tape = try JSONTape.parse(line)
        defer { withExtendedLifetime(tape) {} }  // refs do not keep their tape alive
        let sink = IssueSink()
        guard let fields = FieldReader(tape.root, path: "", sink: sink), let op = fields.string("op") else {
            throw LineError(field: "op", message: "expected a string naming the operation")
        }
        let time = fields.timestamp("time")
        if let issue = sink.issues.first { throw LineError(field: issue.path, message: issue.message) }
        let operation: ControlRecord.Operation
        switch op {
        case "add":
            guard let requests else { throw LineError(field: "op", message: "add records need a catalog context") }
            guard let request = fields["request"] else {
                throw LineError(field: "request", message: "missing; add needs a request")
            }
            switch requests.decoder.decodeRequest(
                request, path: "request", defaults: requests.defaults, categories: requests.categories.ids)
            {
            case .success(let decoded):
                if requests.refusesProximity, decoded.trigger.kind == .proximity {
                    throw LineError(
                        code: .invalidRequest, field: "request.trigger.type",
                        message:
                            "a proximity request cannot be added by a record in a run over several threads (its pairs span the threads' devices): give it in the catalog, or run one thread"
                    )
                }
                operation = .add(decoded)
            case .failure(let error):
                // One field names the first problem; the message names the request (SPEC §12) and
                // every other problem's path too, so a request with several is mended in one round.
                let messages = error.issues.enumerated().map { index, issue in
                    index == 0
                        ? issue.message
                        : "\(issue.path.hasPrefix("request.") ? issue.path.dropFirst(8) : issue.path[...]): \(issue.message)"
                }
                let id = error.issues.first?.requestID ?? ""
                let named = id.isEmpty ? "" : "request \"\(id)\": "
                throw LineError(
                    code: .invalidRequest, field: error.issues.first?.path,
                    message: named + messages.joined(separator: "; "))
            }
        case "removePending", "removeDelivered":
            guard let ids = fields.strings("ids"), sink.issues.isEmpty else {
                throw LineError(field: "ids", message: "\(op) needs ids, an array of request ids")
            }
            operation = op == "removePending" ? .removePending(ids) : .removeDelivered(ids)
        case "removeAllPending": operation = .removeAllPending
        case "removeAllDelivered": operation = .removeAllDelivered
        case "tick": operation = .tick
        case "setCategories":
            guard let requests else {
                throw LineError(field: "op", message: "setCategories records need a catalog context")
            }
            guard let value = fields["categories"], !value.isNull else {
                throw LineError(field: "categories", message: "missing; setCategories needs the category set, an array")
            }
            let categories = requests.decoder.decodeCategories(value, sink: sink)
            if let issue = sink.issues.first { throw LineError(field: issue.path, message: issue.message) }
            requests.categories.ids = Set(categories.map(\.id))
            operation = .setCategories(categories)
        case "respond":
            operation = .respond(try Self.decodeResponse(fields, sink: sink))
        case "removeDevice":
            guard let devices = fields.strings("devices"), sink.issues.isEmpty, !devices.contains(where: \.isEmpty)
            else {
                throw LineError(field: "devices", message: "removeDevice needs devices, an array of device ids")
            }
            operation = .removeDevice(devices)
        default:
            throw LineError(
                field: "op",
                message:
                    "unknown operation \"\(op)\"; expected add, removePending, removeDelivered, removeAllPending, removeAllDelivered, tick, setCategories, respond or removeDevice"
            )
        }
        return .control(ControlRecord(time: time, operation: operation))
    }
}

extension NDJSONReadingDecoder {
    /// A `respond` record's answer (SPEC §8): `seq`, or `request` and `device`; `action`; `text`.
    /// Whether the notification exists and offers the action is the engine's to say.
    static func decodeResponse(_ fields: FieldReader, sink: IssueSink) throws(LineError) -> NotificationResponse {
        func check() throws(LineError) {
            if let issue = sink.issues.first { throw LineError(field: issue.path, message: issue.message) }
        }
        let target: NotificationResponse.Target
        let hasSequence = fields["seq"].map { !$0.isNull } ?? false
        let hasRequest = fields["request"].map { !$0.isNull } ?? false
        switch (hasSequence, hasRequest) {
        case (true, true):
            throw LineError(field: "seq", message: "give seq or request and device, not both")
        case (false, false):
            throw LineError(
                field: "seq", message: "missing; respond needs the notification's seq, or its request and device")
        case (true, false):
            let sequence = fields.integer("seq")
            try check()
            guard let sequence, sequence >= 1 else {
                throw LineError(field: "seq", message: "seq must be an event's number, 1 or more")
            }
            target = .sequence(sequence)
        case (false, true):
            let request = fields.string("request")
            let device = fields.string("device")
            try check()
            target = .latest(request: request ?? "", device: device)
        }
        let action = fields.string("action", required: true)
        let text = fields.string("text")
        try check()
        guard let action, !action.isEmpty else {
            throw LineError(field: "action", message: "action must be \"default\", \"dismiss\" or an action id")
        }
        if let text, text.utf8.count > NotificationContent.maximumFieldBytes {
            throw LineError(
                field: "text",
                message:
                    "text is \(text.utf8.count) bytes; at most \(NotificationContent.maximumFieldBytes) are accepted")
        }
        return NotificationResponse(target: target, action: action, text: text)
    }
}
