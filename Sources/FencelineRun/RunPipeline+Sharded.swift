import Dispatch
import Fenceline
import FencelineFormats
import Foundation

extension RunPipeline {
    /// The pipeline with `threads` threads and `piecesPerThread` engines per thread (at most 16
    /// in all, or one per thread beyond that): each block of NDJSON lines is split into lines and
    /// parsed in parallel (in as many shares as engines; reading a file, alongside the shards
    /// applying the block before), routed in input order (bad lines, `--strict` and control
    /// records exactly as with one engine), applied by the shards in parallel, and their events
    /// merged into the single-engine order and handed to a thread that encodes them. Other
    /// formats are decoded serially and run in batches the same way.
    func runSharded(
        _ readers: [LineReader], write: ([UInt8]) -> Void, report: (String) -> Void, meter: ProgressMeter?
    ) throws -> Summary {
        let threads = options.threads
        let pieces = max(threads, min(threads * max(1, options.piecesPerThread), 16))
        let coordinator = try ShardedRun(
            catalog: catalog, configuration: Engine.Configuration(deliveredLimit: options.deliveredLimit),
            shards: pieces, threads: threads, logger: logger)
        lastShardedRun = coordinator
        let serial = NDJSONReadingDecoder(
            requests: NDJSONReadingDecoder.RequestContext(decoder: catalogDecoder, catalog: catalog))
        var reorder = options.reorderWindow > .zero ? ReorderBuffer(window: options.reorderWindow) : nil
        var summary = Summary()
        var buffer = encoder.header()
        var badLines = BadLineCounter(maximumReported: options.maximumReported, strict: options.strict)
        var keepsReading = true

        // Reading a file, each block is parsed while the shards apply the one before, and events
        // are encoded on a thread of their own while the next block is parsed and applied (this
        // thread takes the bytes in order and writes them). Reading a pipe or standard input,
        // which may pause for any time, each block is applied and its events written before the
        // next is read.
        let encoding = BackgroundEncoding(encoder: encoder)
        var isFile = false
        func emit(_ events: [Event], finishing: Bool = false) {
            if !events.isEmpty { encoding.submit(events) }
            summary.events += events.count
            for part in finishing || !isFile ? encoding.finish() : encoding.take() {
                buffer.append(contentsOf: part)
            }
            if buffer.count >= 1 << 16 || (!isFile && !buffer.isEmpty) {
                write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }

        func accept(_ reading: Reading) {
            summary.readings += 1
            if reorder != nil, let time = reading.time {
                for due in reorder!.add(reading, at: time) { coordinator.route(due) }
            } else {
                coordinator.route(reading)
            }
        }

        /// Writes a batch's events; the first batch with a reading (which added the catalog to the
        /// engines) marks the steady start: `from`, a mark taken before the batch was read, moved
        /// on by the time the catalog took, so the batch's own readings count (a block holds over a
        /// hundred thousand); without it, the end of the batch.
        func batchDone(_ events: [Event], from mark: RunMark? = nil) {
            emit(events)
            if steadyStart == nil && summary.readings > 0 {
                if var mark, coordinator.catalogSeconds > 0 {
                    mark.wall += coordinator.catalogSeconds
                    mark.cpu += coordinator.catalogSeconds
                    steadyStart = mark
                } else {
                    steadyStart = .now(readings: summary.readings)
                }
            }
            meter?.note(summary, always: true)
        }

        // The parse workers' shares of a block, kept from block to block: two sets, one being
        // parsed while the shards apply the other.
        let partSets = (0..<2).map { _ in (0..<pieces).map { _ in ShardedRun.ParsedPart() } }
        var nextSet = 0
        // A block routed but not applied yet: its set of parts, and its mark (see `batchDone`).
        var unapplied: (parts: [ShardedRun.ParsedPart], mark: RunMark?)?

        /// Applies a routed block and hands its events on, with `otherWork` (the next block's parse)
        /// run by the same threads.
        func apply(
            _ batch: (parts: [ShardedRun.ParsedPart], mark: RunMark?),
            otherWork: (count: Int, work: @Sendable (Int) -> Void)? = nil
        ) {
            let views = batch.parts.map(\.view)
            batchDone(
                views.withUnsafeBufferPointer {
                    coordinator.runBatch(final: false, until: nil, parts: $0, otherWork: otherWork)
                }, from: batch.mark)
        }

        for reader in readers {
            guard keepsReading else { break }
            let format = try InputFormat.of(reader, forced: options.inputFormat)
            isFile = reader.size != nil
            if format != .ndjson {
                // CSV, GPX and NMEA are decoded serially, in batches all the same.
                let source = try ReadingSource(
                    reader: reader, format: format, device: options.device, requests: serial.requests)
                var count = 0
                try source.forEach { item in
                    switch item {
                    case .success(let reading): accept(reading)
                    case .failure(let error): keepsReading = badLines.reject(error, report: report)
                    }
                    count += 1
                    if count & 0x7FFF == 0 { batchDone(coordinator.runBatch(final: false, until: nil)) }
                    return keepsReading
                }
                emit(coordinator.runBatch(final: false, until: nil))
                continue
            }

            /// One block of whole lines: split into shares at line ends, each share split into
            /// lines and parsed in parallel (alongside the shards applying the block before, if it
            /// waits), then routed in input order; returns the block's line count.
            func run(block: UnsafeBufferPointer<UInt8>, firstLine: Int) -> Int {
                let mark = steadyStart == nil ? RunMark.now(readings: summary.readings) : nil
                let parts = partSets[nextSet]
                nextSet ^= 1
                let work = ParseWork(block: block, parts: parts, shards: pieces)
                if let previous = unapplied {
                    unapplied = nil
                    apply(previous, otherWork: (pieces, { work.parse(part: $0) }))
                } else {
                    ShardedRun.perform(pieces, threads: threads) { part in work.parse(part: part) }
                }
                var number = firstLine
                for (partIndex, part) in parts.enumerated() where keepsReading {
                    var position = 0
                    while position < part.count && keepsReading {
                        if reorder == nil {
                            // Fixes and sightings in a run, routed by index; readings that must
                            // wait in the reorder window go through `accept(_:)`.
                            let end = coordinator.routeItems(part: partIndex, of: part, from: position)
                            summary.readings += end - position
                            number += end - position
                            position = end
                            guard position < part.count else { break }
                        }
                        defer {
                            number += 1
                            position += 1
                        }
                        do throws(LineError) {
                            switch part.item(at: position) {
                            case .blank: continue
                            case .compactFix: accept(.fix(part.fixes[position].fix(in: part.longNames)))
                            case .reading(let reading): accept(reading)
                            case .failure(let error): throw error
                            case .control:
                                let span = part.lines[position]
                                let line = UnsafeBufferPointer(rebasing: block[span.start..<span.end])
                                if let reading = try serial.decode(line) { accept(reading) }
                            }
                        } catch {
                            keepsReading = badLines.reject(
                                error.located(file: reader.name, line: number), report: report)
                        }
                    }
                }
                let lines = parts.reduce(0) { $0 + $1.count }
                if isFile {
                    unapplied = (parts, mark)
                } else {
                    apply((parts, mark))
                }
                return lines
            }

            try reader.forEachBlock(
                blockSize: options.readBlockSize,
                oversized: { number in
                    if keepsReading {
                        keepsReading = badLines.reject(reader.oversizedLineError(line: number), report: report)
                    }
                }
            ) { block, firstLine in
                guard keepsReading else { return nil }
                let lines = run(block: block, firstLine: firstLine)
                return keepsReading ? lines : nil
            }
            if let last = unapplied {
                unapplied = nil
                apply(last)
            }
            if keepsReading, let failure = reader.failure { keepsReading = badLines.reject(failure, report: report) }
        }
        if let held = reorder?.release(through: nil) {
            for reading in held { coordinator.route(reading) }
        }
        emit(
            coordinator.runBatch(final: true, until: badLines.strictFailure == nil ? options.until : nil),
            finishing: true)
        meter?.note(summary, always: true)
        buffer.append(contentsOf: encoder.footer())
        if !buffer.isEmpty { write(buffer) }
        summary.stale = coordinator.stale
        summary.skipped = badLines.count
        summary.strictFailure = badLines.strictFailure
        if let line = badLines.unreportedLine { report(line) }
        return summary
    }
}

/// Encodes batches of events in order on a serial queue of its own, so the encoding overlaps the
/// next batch's parse and apply; the pipeline's thread takes the bytes (``take()``) and alone
/// writes them. At most two batches wait to be encoded: a third waits for the first.
private final class BackgroundEncoding: @unchecked Sendable {
    private let queue = DispatchQueue(label: "fenceline.encoding")
    private let encoder: any EventEncoder
    /// The last sequence number given; touched on `queue` only.
    private var sequence = 0
    private let lock = NSLock()
    /// Encoded batches not yet taken, in order; under `lock`.
    private var encoded: [[UInt8]] = []
    private let slots = DispatchSemaphore(value: 2)

    init(encoder: any EventEncoder) {
        self.encoder = encoder
    }

    /// Queues a batch, numbering its events on from the last batch's.
    func submit(_ events: [Event]) {
        slots.wait()
        queue.async { [self] in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(events.count * 256)
            for var event in events {
                sequence += 1
                event.sequence = sequence
                encoder.encode(event, into: &bytes)
            }
            lock.withLock { encoded.append(bytes) }
            slots.signal()
        }
    }

    /// The batches encoded since the last call, in order.
    func take() -> [[UInt8]] {
        lock.withLock {
            defer { encoded.removeAll() }
            return encoded
        }
    }

    /// Waits for every queued batch and takes them.
    func finish() -> [[UInt8]] {
        queue.sync {}
        return take()
    }
}
