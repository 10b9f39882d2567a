import NIOCore
import Synchronization

/// The newest events as Server-Sent Events frames, kept in memory for every subscriber of
/// `GET /v1/events/stream`. The engine hands over each group's events once they are committed,
/// so subscribers at the head of the log share one encoding of each and never read the store; a
/// subscriber further back (a reconnect, a new one) reads the store until it reaches what is kept.
final class EventFeed: Sendable {
    /// The events of one committed group: their frames, one after another, and where each starts.
    private struct Page {
        var seqs: [Int]
        var offsets: [Int]
        var frames: ByteBuffer
    }

    /// What a subscriber gets next.
    enum Next {
        /// Frames of the events after the seq asked for, up to `last`, to be written together:
        /// large pages as slices, shared rather than copied (a hundred subscribers would copy
        /// every frame a hundred times), and runs of small ones copied into one buffer (each
        /// buffer goes out as an HTTP chunk of its own).
        case frames([ByteBuffer], last: Int)
        /// The events after the seq asked for are older than those kept: read them from the store.
        case inStore
        /// Nothing after it yet.
        case nothing
    }

    /// Locked, not an actor: the engine hands each group over in commit order without waiting.
    private struct Kept {
        var pages = CircularBuffer<Page>()
        var bytes = 0
        /// The last seq committed; the store holds everything up to it.
        var lastSeq: Int
    }

    private let kept: Mutex<Kept>
    /// The most frame bytes kept: a subscriber this far behind reads the store instead.
    let byteLimit: Int

    /// Pages from this size on are sent as slices of the kept page; smaller ones are copied.
    static let sharedSliceBytes = 16 << 10

    /// The most pages kept (a page per committed group: single-reading posts make many small ones).
    static let pageLimit = 4096

    init(lastSeq: Int, byteLimit: Int = 8 << 20) {
        kept = Mutex(Kept(lastSeq: lastSeq))
        self.byteLimit = byteLimit
    }

    /// Takes the events of a committed group, in seq order.
    func committed(_ events: [ServiceStore.LoggedEvent]) {
        guard let last = events.last else { return }
        var frames = ByteBufferAllocator().buffer(capacity: events.reduce(0) { $0 + $1.json.count + 40 })
        var offsets: [Int] = []
        offsets.reserveCapacity(events.count)
        for event in events {
            offsets.append(frames.writerIndex)
            Self.writeFrame(of: event, into: &frames)
        }
        let page = Page(seqs: events.map(\.seq), offsets: offsets, frames: frames)
        kept.withLock { kept in
            kept.pages.append(page)
            kept.bytes += frames.readableBytes
            kept.lastSeq = last.seq
            // A group larger than the limit is not kept either (a fleet's expiry exits it at
            // once), nor anything before it: the subscribers read it from the store, each on its
            // own, which a rare group costs less than holding it.
            while kept.bytes > byteLimit || kept.pages.count > Self.pageLimit, !kept.pages.isEmpty {
                kept.bytes -= kept.pages.removeFirst().frames.readableBytes
            }
        }
    }

    /// The frames of the events after `seq`, as many pages as make about `limit` bytes.
    func next(after seq: Int, limit: Int = 1 << 20) -> Next {
        kept.withLock { kept in
            let pages = kept.pages
            guard seq < kept.lastSeq else { return .nothing }
            guard let oldest = pages.first?.seqs.first, seq >= oldest - 1 else { return .inStore }
            var out: [ByteBuffer] = []
            var small = ByteBuffer()
            var bytes = 0
            var last = seq
            // The first page with an event after `seq`: pages are in seq order.
            var first = 0
            var beyond = pages.count
            while first < beyond {
                let middle = (first + beyond) / 2
                let page = pages[pages.index(pages.startIndex, offsetBy: middle)]
                if page.seqs[page.seqs.count - 1] > seq { beyond = middle } else { first = middle + 1 }
            }
            for page in pages[pages.index(pages.startIndex, offsetBy: first)...] {
                // The first event after `seq` in this page (a resumed subscriber may start mid-page).
                var low = 0
                var high = page.seqs.count - 1
                while low < high {
                    let middle = (low + high) / 2
                    if page.seqs[middle] > seq { high = middle } else { low = middle + 1 }
                }
                let start = page.offsets[low]
                let slice = page.frames.getSlice(at: start, length: page.frames.writerIndex - start)!
                if slice.readableBytes >= Self.sharedSliceBytes {
                    if small.readableBytes > 0 {
                        out.append(small)
                        small = ByteBuffer()
                    }
                    out.append(slice)
                } else {
                    small.writeImmutableBuffer(slice)
                }
                bytes += slice.readableBytes
                last = page.seqs[page.seqs.count - 1]
                if bytes >= limit { break }
            }
            if small.readableBytes > 0 { out.append(small) }
            return .frames(out, last: last)
        }
    }

    /// One event as an SSE frame: its seq as the id (a reconnect sends it back as
    /// `Last-Event-ID`), its kind as the event name, its JSON as the data.
    static func writeFrame(of event: ServiceStore.LoggedEvent, into buffer: inout ByteBuffer) {
        buffer.writeString("id: \(event.seq)\nevent: \(event.kind)\ndata: ")
        buffer.writeBytes(event.json)
        buffer.writeBytes([0x0A, 0x0A])
    }
}
