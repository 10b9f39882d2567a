/// The parts of checkpoints an engine keeps from one to the next (a service checkpoints again and
/// again): each request's encoding and the given requests' digests, which a caller can make on
/// another thread.
extension Engine {
    /// Whether checkpoints keep what they encode of the requests from the first one on, for the
    /// next (a service, which checkpoints again and again). Otherwise they do from the second.
    package var keepsCheckpointEncodings: Bool {
        get { checkpointCache.keepsFromFirst }
        set { checkpointCache.keepsFromFirst = newValue }
    }

    /// What a checkpoint would otherwise encode itself since the last call: the requests added
    /// and the given requests to hash. A caller makes it on another thread
    /// (``CheckpointPreparation/make()`` needs no engine) and gives it back with
    /// ``keep(_:)``: with a large catalog, that work was most of the first checkpoint, which
    /// holds up ingest. `nil` when there is nothing new.
    package func checkpointPreparation() -> CheckpointPreparation? {
        let added = (checkpointCache.preparedSlots..<requests.count).filter { states[$0].isAlive }
        checkpointCache.preparedSlots = requests.count
        guard !added.isEmpty || !givenRequests.isEmpty else { return nil }
        return CheckpointPreparation(
            requests: added.map { ($0, requests[$0].request) }, given: givenRequests, digests: givenDigests,
            givenEpoch: checkpointCache.givenEpoch)
    }

    /// Keeps what a ``CheckpointPreparation`` made for the checkpoints to come. Encodings of
    /// slots no longer live are dropped (a slot's request never changes, so the others stay
    /// right); the digests only if no checkpoint took the given requests in since. Returns the
    /// given requests it let go of, for a caller that would rather free them on another thread.
    @discardableResult
    package func keep(_ prepared: PreparedCheckpoint) -> [NotificationRequest] {
        checkpointCache.requests.append(
            contentsOf: repeatElement([], count: max(0, requests.count - checkpointCache.requests.count)))
        for (slot, bytes) in prepared.encodings where slot < requests.count && states[slot].isAlive {
            checkpointCache.requests[slot] = bytes
        }
        // Until a checkpoint takes them in, given requests are only ever appended.
        guard prepared.givenEpoch == checkpointCache.givenEpoch, prepared.givenCount > 0 else { return [] }
        givenDigests = prepared.digests
        let released = givenRequests
        givenRequests = Array(givenRequests.dropFirst(prepared.givenCount))
        checkpointCache.givenDigests = givenRequests.isEmpty ? prepared.encodedDigests : nil
        return released
    }

    /// The `seq` the next event released will get (a checkpoint's summary holds it too).
    package var nextEventSequence: Int { events.released + 1 }

    /// A request as checkpoints encode it, or as format 1 did (for its digest, ``digest(of:)``).
    static func encoding(of request: NotificationRequest, asFormat1: Bool = false) -> [UInt8] {
        var writer = CheckpointWriter()
        writer.digestsAsFormat1 = asFormat1
        writer.write(request)
        return writer.bytes
    }

    /// The given requests' digests as a checkpoint holds them: sorted by id.
    static func encoded(digests: [String: UInt64]) -> [UInt8] {
        var writer = CheckpointWriter()
        writer.write(each: digests.sorted { $0.key < $1.key }) { writer, entry in
            writer.write(entry.key)
            writer.write(entry.value)
        }
        return writer.bytes
    }
}

/// Encodings and digests for an engine's checkpoints, to be made away from it
/// (``Engine/checkpointPreparation()``).
package struct CheckpointPreparation: Sendable {
    var requests: [(slot: Int, request: NotificationRequest)]
    var given: [NotificationRequest]
    var digests: [String: UInt64]
    var givenEpoch: Int

    /// The encodings and digests, made on the caller's thread; give them to ``Engine/keep(_:)``.
    package func make() -> PreparedCheckpoint {
        var digests = self.digests
        for request in given { digests[request.id] = Engine.digest(of: request) }
        return PreparedCheckpoint(
            encodings: requests.map { ($0.slot, Engine.encoding(of: $0.request)) }, digests: digests,
            encodedDigests: Engine.encoded(digests: digests), givenCount: given.count, givenEpoch: givenEpoch)
    }
}

/// What ``CheckpointPreparation/make()`` made.
package struct PreparedCheckpoint: Sendable {
    var encodings: [(slot: Int, bytes: [UInt8])]
    var digests: [String: UInt64]
    var encodedDigests: [UInt8]
    var givenCount: Int
    var givenEpoch: Int
}
