import Foundation
import NIOCore
import Testing

@testable import FencelineService

/// The SSE feed: committed groups become shared frames; a subscriber gets every event after its
/// seq once, from mid-page too; one behind what is kept is sent to the store.
@Suite struct EventFeedTests {
    static func events(_ seqs: ClosedRange<Int>) -> [ServiceStore.LoggedEvent] {
        seqs.map {
            .init(seq: $0, kind: "enter", device: "d", request: "r", json: Array(#"{"seq":\#($0)}"#.utf8))
        }
    }

    static func seqs(in frames: [ByteBuffer]) -> [Int] {
        text(of: frames).split(separator: "\n").compactMap { line in
            line.hasPrefix("id: ") ? Int(line.dropFirst(4)) : nil
        }
    }

    static func text(of frames: [ByteBuffer]) -> String {
        frames.map { String(buffer: $0) }.joined()
    }

    @Test func subscribersGetEveryEventAfterTheirSeqOnce() throws {
        let feed = EventFeed(lastSeq: 10)
        guard case .inStore = feed.next(after: 3) else { Issue.record("before the first page: the store"); return }
        guard case .nothing = feed.next(after: 10) else { Issue.record("at the head: nothing"); return }
        feed.committed(Self.events(11...15))
        feed.committed([])
        feed.committed(Self.events(16...16))
        feed.committed(Self.events(17...20))
        for after in 10...19 {
            guard case .frames(let frames, let last) = feed.next(after: after) else {
                Issue.record("after \(after)")
                continue
            }
            #expect(Self.seqs(in: frames) == Array((after + 1)...20), "after \(after)")
            #expect(last == 20)
        }
        guard case .nothing = feed.next(after: 20) else { Issue.record("at the head again"); return }
        guard case .inStore = feed.next(after: 9) else { Issue.record("one before the first kept"); return }
        // A frame reads as SSE: id, event name, data.
        guard case .frames(let frames, _) = feed.next(after: 19) else { return }
        #expect(Self.text(of: frames) == "id: 20\nevent: enter\ndata: {\"seq\":20}\n\n")
    }

    /// Each buffer becomes an HTTP chunk: small pages (single readings) go out copied into one,
    /// large ones as slices of the kept page, in seq order either way.
    @Test func smallPagesAreJoinedAndLargeOnesShared() {
        let feed = EventFeed(lastSeq: 0)
        for seq in 1...100 { feed.committed(Self.events(seq...seq)) }
        let large = String(repeating: "x", count: EventFeed.sharedSliceBytes)
        feed.committed([
            .init(seq: 101, kind: "exit", device: "d", request: "r", json: Array(#"{"pad":"\#(large)"}"#.utf8))
        ])
        feed.committed(Self.events(102...103))
        guard case .frames(let frames, let last) = feed.next(after: 0) else {
            Issue.record("the kept pages")
            return
        }
        #expect(frames.count == 3, "100 small pages, one large, then two small")
        #expect(Self.seqs(in: frames) == Array(1...103))
        #expect(last == 103)
        #expect(frames[1].readableBytes > EventFeed.sharedSliceBytes)
    }

    @Test func theOldestPagesGoPastTheLimit() {
        let feed = EventFeed(lastSeq: 0, byteLimit: 200)
        for first in stride(from: 1, through: 100, by: 5) { feed.committed(Self.events(first...(first + 4))) }
        guard case .inStore = feed.next(after: 0) else { Issue.record("the first pages were dropped"); return }
        guard case .frames(let frames, let last) = feed.next(after: 99) else { Issue.record("the newest kept"); return }
        #expect(Self.seqs(in: frames) == [100])
        #expect(last == 100)
    }

    @Test func aGroupLargerThanTheLimitIsReadFromTheStore() {
        let feed = EventFeed(lastSeq: 0, byteLimit: 200)
        feed.committed(Self.events(1...2))
        feed.committed(Self.events(3...40))
        guard case .inStore = feed.next(after: 2) else { Issue.record("the large group was kept"); return }
        guard case .nothing = feed.next(after: 40) else { Issue.record("the log ends at 40"); return }
    }
}
