import FencelineFormats
import Foundation

/// Lines read on a background thread and handed over with a timeout, so a live run can let the
/// wall clock move the engine while no input arrives (`--clock wall`).
final class LiveLines: @unchecked Sendable {
    /// What the reader thread produced.
    enum Item {
        case line([UInt8], number: Int)
        case oversized(number: Int)
        case failed(InputError)
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var items: [Item] = []
    private var finished = false

    /// Starts reading `reader` on its own thread.
    init(reader: LineReader) {
        let box = UncheckedBox(reader)
        let thread = Thread { [self] in
            do {
                try box.value.forEachLine(oversized: { self.push(.oversized(number: $0)) }) { line, number in
                    self.push(.line(Array(line), number: number))
                    return true
                }
            } catch let error as InputError {
                self.push(.failed(error))
            } catch {
                self.push(.failed(InputError(code: .unreadable, file: box.value.name, message: "\(error)")))
            }
            self.condition.lock()
            self.finished = true
            self.condition.signal()
            self.condition.unlock()
        }
        thread.start()
    }

    private func push(_ item: Item) {
        condition.lock()
        items.append(item)
        condition.signal()
        condition.unlock()
    }

    /// The items read so far (waiting up to `timeout` for one), and whether the input has ended.
    func next(timeout: TimeInterval) -> (items: [Item], ended: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if items.isEmpty && !finished { _ = condition.wait(until: Date(timeIntervalSinceNow: timeout)) }
        let taken = items
        items = []
        return (taken, finished && items.isEmpty)
    }
}

/// Carries a non-Sendable value to the reader thread, which is its only user from then on.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
