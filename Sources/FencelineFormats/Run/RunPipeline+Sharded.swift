import Dispatch
import Fenceline

extension RunPipeline {
    /// The pipeline with `threads` engines: batches of lines are parsed in parallel, routed in
    /// input order (bad lines, `--strict` and control records exactly as with one engine), applied
    /// by the shards in parallel, and their events merged into the single-engine order.
    func runSharded(
        _ readers: [LineReader], write: ([UInt8]) -> Void, report: (String) -> Void, meter: ProgressMeter?
    ) throws -> Summary {
        let threads = options.threads
        let coordinator = try ShardedRun(
            catalog: catalog, configuration: Engine.Configuration(deliveredLimit: options.deliveredLimit),
            threads: threads)
        lastShardedRun = coordinator
        let serial = NDJSONReadingDecoder(
            requests: NDJSONReadingDecoder.RequestContext(decoder: catalogDecoder, catalog: catalog))
        var reorder = options.reorderWindow > .zero ? ReorderBuffer(window: options.reorderWindow) : nil
        var summary = Summary()
        var buffer = encoder.header()
        var badLines = BadLineCounter(maximumReported: options.maximumReported, strict: options.strict)
        var sequence = 0
        var goOn = true

        func emit(_ events: [Event]) {
            for var event in events {
                sequence += 1
                event.sequence = sequence
                encoder.encode(event, into: &buffer)
            }
            summary.events += events.count
            if buffer.count >= 1 << 16 {
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

        /// A fix or sighting of the batch, routed by index: it stays in `parsed`, and the time and
        /// shard come from the parse.
        func accept(item index: Int) {
            let meta = parsed.meta[index]
            summary.readings += 1
            coordinator.route(item: index, time: Timestamp(microseconds: meta.time), shard: Int(meta.shard))
        }

        // One batch: the bytes of its lines back to back, and where each line is (start -1 marks
        // a line too long to keep).
        var bytes: [UInt8] = []
        var spans: [(start: Int, end: Int, number: Int)] = []
        let parsed = ShardedRun.ParsedBox()

        for reader in readers {
            guard goOn else { break }
            let format = try InputFormat.of(reader, forced: options.inputFormat)
            if format != .ndjson {
                // CSV, GPX and NMEA are decoded serially, in batches all the same.
                let source = try ReadingSource(
                    reader: reader, format: format, device: options.device, requests: serial.requests)
                var count = 0
                try source.forEach { item in
                    switch item {
                    case .success(let reading): accept(reading)
                    case .failure(let error): goOn = badLines.reject(error, report: report)
                    }
                    count += 1
                    if count & 0x7FFF == 0 {
                        emit(coordinator.runBatch(final: false, until: nil))
                        if steadyStart == nil && summary.readings > 0 { steadyStart = .now(readings: summary.readings) }
                        meter?.note(summary, always: true)
                    }
                    return goOn
                }
                emit(coordinator.runBatch(final: false, until: nil))
                continue
            }

            func flush() {
                let count = spans.count
                // Kept from batch to batch and only grown: the workers overwrite the entries of this
                // batch's lines, releasing the last batch's readings in parallel rather than in a
                // serial clear here.
                if parsed.items.count < count {
                    parsed.items.append(contentsOf: repeatElement(.blank, count: count - parsed.items.count))
                    parsed.meta.append(
                        contentsOf: repeatElement((time: 0, shard: -1), count: count - parsed.meta.count))
                }
                // Parsed in parallel, one chunk of lines per thread.
                let chunk = (count + threads - 1) / threads
                bytes.withUnsafeBufferPointer { all in
                    parsed.items.withUnsafeMutableBufferPointer { items in
                        parsed.meta.withUnsafeMutableBufferPointer { meta in
                            let work = ParseWork(all: all, items: items, meta: meta, spans: spans)
                            DispatchQueue.concurrentPerform(iterations: threads) { part in
                                work.parse(
                                    min(count, part * chunk)..<min(count, (part + 1) * chunk), shards: threads)
                            }
                        }
                    }
                }
                bytes.withUnsafeBufferPointer { all in
                    for index in 0..<count where goOn {
                        let span = spans[index]
                        guard span.start >= 0 else {
                            goOn = badLines.reject(reader.oversizedLineError(line: span.number), report: report)
                            continue
                        }
                        if reorder == nil, parsed.meta[index].shard >= 0 {
                            // Readings that must wait in the reorder window go through `accept(_:)`.
                            accept(item: index)
                            continue
                        }
                        let line = UnsafeBufferPointer(rebasing: all[span.start..<span.end])
                        do throws(LineError) {
                            switch parsed.items[index] {
                            case .blank: continue
                            case .fix(let fix): accept(.fix(fix))
                            case .reading(let reading): accept(reading)
                            case .failure(let error): throw error
                            case .control: if let reading = try serial.decode(line) { accept(reading) }
                            }
                        } catch {
                            goOn = badLines.reject(error.located(file: reader.name, line: span.number), report: report)
                        }
                    }
                }
                emit(
                    parsed.items.withUnsafeBufferPointer {
                        coordinator.runBatch(
                            final: false, until: nil, items: UnsafeBufferPointer(rebasing: $0[..<count]))
                    })
                if steadyStart == nil && summary.readings > 0 { steadyStart = .now(readings: summary.readings) }
                meter?.note(summary, always: true)
                bytes.removeAll(keepingCapacity: true)
                spans.removeAll(keepingCapacity: true)
            }

            try reader.forEachLine(oversized: { number in spans.append((-1, -1, number)) }) { line, number in
                spans.append((bytes.count, bytes.count + line.count, number))
                bytes.append(contentsOf: line)
                if spans.count >= 1 << 15 {
                    flush()
                    return goOn
                }
                return true
            }
            if goOn || !spans.isEmpty { flush() }
            if goOn, let failure = reader.failure { goOn = badLines.reject(failure, report: report) }
        }
        if let held = reorder?.release(through: nil) {
            for reading in held { coordinator.route(reading) }
        }
        emit(coordinator.runBatch(final: true, until: badLines.strictFailure == nil ? options.until : nil))
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

/// The pointers a parallel parse shares: disjoint ranges of `items` and `meta` per worker, `all`
/// read-only.
private struct ParseWork: @unchecked Sendable {
    let all: UnsafeBufferPointer<UInt8>
    let items: UnsafeMutableBufferPointer<ShardedRun.Parsed>
    let meta: UnsafeMutableBufferPointer<(time: Int64, shard: Int32)>
    let spans: [(start: Int, end: Int, number: Int)]

    /// Parses the lines in `range`, noting each reading's time and shard for the coordinator.
    func parse(_ range: Range<Int>, shards: Int) {
        let decoder = NDJSONReadingDecoder()
        for index in range {
            // Time and shard for a fix or sighting; (0, -1) marks anything else.
            var routing: (time: Int64, shard: Int32) = (0, -1)
            defer { meta[index] = routing }
            guard spans[index].start >= 0 else {
                items[index] = .blank
                continue
            }
            let line = UnsafeBufferPointer(rebasing: all[spans[index].start..<spans[index].end])
            if let fix = decoder.canonicalFix(line) {
                routing = (fix.time.microseconds, Int32(ShardedRun.shard(of: fix.device, count: shards)))
                items[index] = .fix(fix)
                continue
            }
            do throws(LineError) {
                switch try decoder.decode(line, deferringControls: true, tryingCanonical: false) {
                case .blank: items[index] = .blank
                case .reading(let reading):
                    items[index] = .reading(reading)
                    switch reading {
                    case .fix(let fix):
                        routing = (fix.time.microseconds, Int32(ShardedRun.shard(of: fix.device, count: shards)))
                    case .sighting(let sighting):
                        routing = (
                            sighting.time.microseconds, Int32(ShardedRun.shard(of: sighting.device, count: shards))
                        )
                    case .control: break
                    }
                case .control: items[index] = .control
                }
            } catch {
                items[index] = .failure(error)
            }
        }
    }
}
