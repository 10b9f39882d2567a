import Fenceline

extension CatalogDecoder {
    func decodeContent(_ value: JSONRef?, path: String, sink: IssueSink) -> NotificationContent {
        guard let fields = FieldReader(value, path: path, sink: sink, required: false) else {
            return NotificationContent()
        }
        fields.warnUnknown(known: Self.contentFields)
        var content = NotificationContent()
        content.title = fields.string("title")
        content.subtitle = fields.string("subtitle")
        content.body = fields.string("body")
        if let badge = fields.integer("badge") {
            if badge < 0 {
                sink.add(fields.at("badge"), "badge must be ≥ 0 (got \(badge))")
            } else {
                content.badge = badge
            }
        }
        content.sound = fields.string("sound")
        content.category = fields.string("category")
        content.thread = fields.string("thread")
        content.mutableContent = fields.bool("mutableContent") ?? false
        if let userInfo = fields["userInfo"], !userInfo.isNull {
            if userInfo.kind == .object {
                content.userInfo = userInfo.objectValue
            } else {
                sink.add(fields.at("userInfo"), "expected an object, found \(userInfo.kindName)")
            }
        }
        if let attachments = fields["attachments"], !attachments.isNull {
            if let items = attachments.elements {
                content.attachments = items.enumerated().compactMap { index, item in
                    decodeAttachment(item, path: "\(fields.at("attachments"))[\(index)]", sink: sink)
                }
            } else {
                sink.add(fields.at("attachments"), "expected an array, found \(attachments.kindName)")
            }
        }
        return content
    }

    /// One attachment; its ranges, URL and type are checked with the request (``RequestValidator``),
    /// so that a request built in code is held to the same rules.
    private func decodeAttachment(_ value: JSONRef, path: String, sink: IssueSink) -> NotificationAttachment? {
        guard let fields = FieldReader(value, path: path, sink: sink) else { return nil }
        fields.warnUnknown(known: Self.attachmentFields)
        let id = fields.string("id", required: true)
        let url = fields.string("url", required: true)
        var attachment = NotificationAttachment(id: id ?? "", url: url ?? "", type: fields.string("type"))
        // A null option set, or rectangle, is absent, as every optional member is.
        func present(_ value: JSONRef?) -> JSONRef? { value?.isNull == true ? nil : value }
        if let options = FieldReader(
            present(fields["options"]), path: fields.at("options"), sink: sink, required: false)
        {
            options.warnUnknown(known: Self.attachmentOptionFields)
            attachment.thumbnailHidden = options.bool("thumbnailHidden")
            attachment.thumbnailTime = options.number("thumbnailTime")
            if let rect = FieldReader(
                present(options["thumbnailClippingRect"]), path: options.at("thumbnailClippingRect"), sink: sink,
                required: false)
            {
                rect.warnUnknown(known: Self.clippingRectFields)
                let values = ["x", "y", "width", "height"].map { rect.number($0, required: true) }
                if case (let x?, let y?, let width?, let height?) = (values[0], values[1], values[2], values[3]) {
                    attachment.thumbnailClippingRect = .init(x: x, y: y, width: width, height: height)
                }
            }
        }
        return id != nil && url != nil ? attachment : nil
    }

    func decodeCategories(_ value: JSONRef?, sink: IssueSink) -> [NotificationCategory] {
        guard let value, !value.isNull else { return [] }
        guard let items = value.elements else {
            sink.add("categories", "expected an array, found \(value.kindName)")
            return []
        }
        var categories: [NotificationCategory] = []
        for (index, item) in items.enumerated() {
            guard let fields = FieldReader(item, path: "categories[\(index)]", sink: sink) else { continue }
            fields.warnUnknown(known: Self.categoryFields)
            guard let id = fields.string("id", required: true) else { continue }
            if id.isEmpty { sink.add(fields.at("id"), "id must be a non-empty string") }
            var category = NotificationCategory(id: id, options: fields.strings("options") ?? [])
            let known: Set<String> = [
                "customDismissAction", "allowInCarPlay", "hiddenPreviewsShowTitle", "hiddenPreviewsShowSubtitle",
                "allowAnnouncement",
            ]
            for (position, option) in category.options.enumerated() where !known.contains(option) {
                sink.add(
                    "categories[\(index)].options[\(position)]",
                    "unknown category option \"\(option)\"; expected one of \(known.sorted().joined(separator: ", "))")
            }
            if let actions = fields["actions"] {
                guard let list = actions.elements else {
                    sink.add(fields.at("actions"), "expected an array, found \(actions.kindName)")
                    continue
                }
                for (position, action) in list.enumerated() {
                    guard
                        let actionFields = FieldReader(action, path: "\(fields.at("actions"))[\(position)]", sink: sink)
                    else { continue }
                    actionFields.warnUnknown(known: Self.actionMemberFields)
                    let actionID = actionFields.string("id", required: true)
                    if actionID?.isEmpty == true {
                        sink.add(actionFields.at("id"), "id must be a non-empty string")
                    }
                    let title = actionFields.string("title", required: true)
                    let options = actionFields.strings("options") ?? []
                    for (optionIndex, option) in options.enumerated()
                    where !["foreground", "destructive", "authenticationRequired"].contains(option) {
                        sink.add(
                            "\(actionFields.at("options"))[\(optionIndex)]",
                            "unknown action option \"\(option)\"; expected foreground, destructive or authenticationRequired"
                        )
                    }
                    var textInput: NotificationAction.TextInput?
                    if let input = FieldReader(
                        actionFields["textInput"], path: actionFields.at("textInput"), sink: sink,
                        required: false)
                    {
                        input.warnUnknown(known: Self.textInputFields)
                        textInput = NotificationAction.TextInput(
                            button: input.string("button") ?? "Send", placeholder: input.string("placeholder") ?? "")
                    }
                    if let actionID, let title {
                        category.actions.append(
                            NotificationAction(id: actionID, title: title, options: options, textInput: textInput))
                    }
                }
            }
            if categories.contains(where: { $0.id == id }) {
                sink.add("categories[\(index)].id", "repeats the category id \"\(id)\"")
            }
            categories.append(category)
        }
        return categories
    }

    func decodeSchedule(_ value: JSONRef?, path: String, sink: IssueSink) -> Schedule? {
        guard let fields = FieldReader(value, path: path, sink: sink, required: false) else { return nil }
        fields.warnUnknown(known: Self.scheduleFields)
        var schedule = Schedule(timeZone: fields.string("timeZone") ?? "UTC", windows: [])
        guard let items = fields["windows"]?.elements else {
            sink.add(fields.at("windows"), "a schedule needs \"windows\", an array of {\"days\", \"start\", \"end\"}")
            return nil
        }
        guard items.count > 0 else {
            sink.add(
                fields.at("windows"), "a schedule needs at least one window: with none the request could never notify")
            return nil
        }
        let dayNames = Schedule.dayNames
        for (index, item) in items.enumerated() {
            guard let window = FieldReader(item, path: "\(fields.at("windows"))[\(index)]", sink: sink) else {
                continue
            }
            window.warnUnknown(known: Self.windowFields)
            var days: Set<Int> = []
            for (position, name) in (window.strings("days") ?? dayNames).enumerated() {
                if let day = dayNames.firstIndex(of: String(name.lowercased().prefix(3))), name.count >= 3 {
                    days.insert(day + 1)
                } else {
                    sink.add(
                        "\(window.at("days"))[\(position)]",
                        "unknown day \"\(name)\"; use sun, mon, tue, wed, thu, fri or sat")
                }
            }
            guard
                let start = clockMinutes(window.string("start", required: true), path: window.at("start"), sink: sink),
                let end = clockMinutes(window.string("end", required: true), path: window.at("end"), sink: sink)
            else { continue }
            schedule.windows.append(Schedule.Window(days: days, start: start, end: end))
        }
        return schedule
    }

    private func clockMinutes(_ text: String?, path: String, sink: IssueSink) -> Int? {
        guard let text else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]), parts[1].count == 2,
            (0...24).contains(hour), (0...59).contains(minute), hour * 60 + minute <= 1440
        else {
            sink.add(path, "expected a local time \"HH:MM\" between 00:00 and 24:00, found \"\(text)\"")
            return nil
        }
        return hour * 60 + minute
    }
}

extension Schedule {
    /// A window's days as the catalog names them, from Sunday (day 1).
    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
}
