/// Events (delivered notifications, events not yet released) and readings (held by a reorder
/// window, control records waiting for the first clock) in a checkpoint.
extension CheckpointWriter {
    mutating func write(_ event: Event) {
        write(event.sequence)
        write(event.time)
        write(event.requestID)
        write(event.device) { $0.write($1) }
        writeCase(event.trigger)
        writeCase(event.kind)
        write(event.since) { $0.write($1) }
        write(event.state) { $0.write($1 == .inside) }
        write(event.position) { $0.write($1) }
        write(event.distance) { $0.write($1) }
        write(event.beacon) { $0.write($1) }
        write(event.content)
        write(each: event.actions) { $0.write($1) }
        write(event.response) { writer, response in
            writer.write(response.respondsTo)
            writer.write(response.action)
            writer.write(response.text) { $0.write($1) }
            writer.write(each: response.options) { $0.write($1) }
            writer.write(response.time)
        }
        write(event.reason) { $0.writeCase($1) }
        write(event.visit) { $0.write($1) }
        write(event.duration) { $0.write($1) }
        write(event.other) { $0.write($1) }
    }

    mutating func write(_ position: Position) {
        write(position.coordinate)
        write(position.accuracy) { $0.write($1) }
    }

    mutating func write(_ report: BeaconReport) {
        write(report.identity)
        write(report.rssi)
        write(report.distance)
        writeCase(report.proximity)
    }

    mutating func write(_ identity: BeaconIdentity) {
        write(identity.uuid)
        write(identity.major)
        write(identity.minor)
    }

    mutating func write(_ reading: Reading) {
        switch reading {
        case .fix(let fix):
            write(UInt8(0))
            write(fix.device)
            write(fix.time)
            write(fix.coordinate)
            for value in [fix.accuracy, fix.speed, fix.heading, fix.altitude] { write(value) { $0.write($1) } }
        case .sighting(let sighting):
            write(UInt8(1))
            write(sighting.device)
            write(sighting.time)
            write(sighting.beacon)
            write(sighting.rssi)
            write(sighting.txPower) { $0.write($1) }
        case .control(let control):
            write(UInt8(2))
            write(control)
        }
    }

    mutating func write(_ control: ControlRecord) {
        write(control.time) { $0.write($1) }
        switch control.operation {
        case .add(let request):
            write(UInt8(0))
            write(request)
        case .removePending(let ids):
            write(UInt8(1))
            write(each: ids) { $0.write($1) }
        case .removeDelivered(let ids):
            write(UInt8(2))
            write(each: ids) { $0.write($1) }
        case .removeAllPending: write(UInt8(3))
        case .removeAllDelivered: write(UInt8(4))
        case .tick: write(UInt8(5))
        case .setCategories(let categories):
            write(UInt8(6))
            write(each: categories) { $0.write($1) }
        case .respond(let response):
            write(UInt8(7))
            switch response.target {
            case .sequence(let sequence):
                write(UInt8(0))
                write(sequence)
            case .latest(let request, let device):
                write(UInt8(1))
                write(request)
                write(device) { $0.write($1) }
            }
            write(response.action)
            write(response.text) { $0.write($1) }
        case .removeDevice(let devices):
            write(UInt8(8))
            write(each: devices) { $0.write($1) }
        }
    }
}

extension CheckpointReader {
    mutating func event() throws -> Event {
        let sequence = try int(in: 0...Int(Int64.max), "an event's seq")
        let time = try timestamp()
        let request = try string()
        let device = try optional { try $0.string() }
        let trigger = try caseIndex(TriggerKind.self, "a trigger kind")
        let kind = try caseIndex(EventKind.self, "an event kind")
        let since = try optional { try $0.timestamp() }
        let state = try optional { reader in
            try reader.bool() ? RegionStatus.inside : .outside
        }
        let position = try optional { try $0.position() }
        let distance = try optional { try $0.double() }
        let beacon = try optional { try $0.beaconReport() }
        let content = try content()
        let actions = try array { try $0.action() }
        // Format 1 kept no responses.
        let response =
            version < 2
            ? nil
            : try optional { reader in
                ResponseReport(
                    respondsTo: try reader.int(in: 0...Int(Int64.max), "a response's seq"), action: try reader.string(),
                    text: try reader.optional { try $0.string() }, options: try reader.array { try $0.string() },
                    time: try reader.timestamp())
            }
        // Format 3 added reasons and visits.
        let reason = version < 3 ? nil : try optional { try $0.caseIndex(EventReason.self, "an event reason") }
        let visit = version < 3 ? nil : try optional { try $0.int(in: 1...Int(Int32.max), "a visit") }
        let duration = version < 3 ? nil : try optional { try $0.timeSpan() }
        // Format 4 added proximity pairs' other device.
        let other = version < 4 ? nil : try optional { try $0.string() }
        return Event(
            sequence: sequence, time: time, requestID: request, device: device, trigger: trigger, kind: kind,
            since: since, state: state, position: position, distance: distance, beacon: beacon,
            content: content, actions: actions, response: response, reason: reason, visit: visit, duration: duration,
            other: other)
    }

    mutating func position() throws -> Position {
        Position(coordinate: try coordinate(), accuracy: try optional { try $0.double() })
    }

    mutating func beaconReport() throws -> BeaconReport {
        BeaconReport(
            identity: try beaconIdentity(), rssi: try double(), distance: try double(),
            proximity: try caseIndex(Proximity.self, "a proximity"))
    }

    mutating func beaconIdentity() throws -> BeaconIdentity {
        BeaconIdentity(uuid: try string(), major: try int(), minor: try int())
    }

    mutating func reading() throws -> Reading {
        switch try byte() {
        case 0:
            let device = try string()
            let time = try timestamp()
            let coordinate = try coordinate()
            var values: [Double?] = []
            for _ in 0..<4 { values.append(try optional { try $0.double() }) }
            return .fix(
                Fix(
                    device: device, time: time, coordinate: coordinate, accuracy: values[0], speed: values[1],
                    heading: values[2], altitude: values[3]))
        case 1:
            return .sighting(
                BeaconSighting(
                    device: try string(), time: try timestamp(), beacon: try beaconIdentity(), rssi: try double(),
                    txPower: try optional { try $0.double() }))
        case 2:
            return .control(try controlRecord())
        case let tag:
            throw damaged("reading kind \(tag) is unknown")
        }
    }

    mutating func controlRecord() throws -> ControlRecord {
        let time = try optional { try $0.timestamp() }
        let operation: ControlRecord.Operation
        switch try byte() {
        case 0: operation = .add(try request())
        case 1: operation = .removePending(try array { try $0.string() })
        case 2: operation = .removeDelivered(try array { try $0.string() })
        case 3: operation = .removeAllPending
        case 4: operation = .removeAllDelivered
        case 5: operation = .tick
        case 6: operation = .setCategories(try array(typicalSize: 12) { try $0.category() })
        case 7:
            let target: NotificationResponse.Target
            switch try byte() {
            case 0: target = .sequence(try int(in: 1...Int(Int64.max), "a response's seq"))
            case 1: target = .latest(request: try string(), device: try optional { try $0.string() })
            case let tag: throw damaged("response target \(tag) is unknown")
            }
            operation = .respond(
                NotificationResponse(target: target, action: try string(), text: try optional { try $0.string() }))
        case 8: operation = .removeDevice(try array { try $0.string() })
        case let tag: throw damaged("control operation \(tag) is unknown")
        }
        return ControlRecord(time: time, operation: operation)
    }
}
