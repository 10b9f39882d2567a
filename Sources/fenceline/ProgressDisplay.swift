import FencelineFormats
import FencelineRun
import Foundation

/// The progress line of long runs on stderr: percent of bytes read, readings, readings per second
/// (wall clock, for people only; the output never depends on it) and events so far.
///
/// On a terminal the line is redrawn in place at most four times a second and cleared at the end;
/// forced on elsewhere (`--progress`), each update is a line of its own.
final class ProgressDisplay {
    private let onTerminal: Bool
    private let started = ProgressDisplay.now()
    private var lastDrawn = 0.0
    private var drawn = false

    /// Whether progress shows for a run: on a terminal reading files (not standard input), or when
    /// forced; never with `--quiet`.
    static func isWanted(forced: Bool, quiet: Bool, inputs: [String]) -> Bool {
        guard !quiet else { return false }
        return forced || (isatty(2) == 1 && !inputs.isEmpty && !inputs.contains("-"))
    }

    init() {
        onTerminal = isatty(2) == 1
    }

    /// Draws `progress` unless the last drawing was less than a quarter second ago.
    func update(_ progress: RunPipeline.Progress) {
        let now = Self.now()
        guard now - lastDrawn >= 0.25 else { return }
        lastDrawn = now
        let line = Self.describe(progress, elapsed: now - started)
        if onTerminal {
            OutputFile.standardError.write("\r\u{1B}[K" + line)
        } else {
            OutputFile.report(line)
        }
        drawn = true
    }

    /// Clears the line on a terminal, so a diagnostic or the summary takes its place.
    func finish() {
        if onTerminal && drawn { OutputFile.standardError.write("\r\u{1B}[K") }
        drawn = false
    }

    /// `fenceline: 42% · 1,234,567 readings · 812 k/s · 1,234 events`.
    static func describe(_ progress: RunPipeline.Progress, elapsed: Double) -> String {
        var parts: [String] = []
        if let total = progress.totalBytes, total > 0 {
            parts.append("\(min(100, progress.bytesRead * 100 / total))%")
        }
        parts.append("\(grouped(progress.readings)) readings")
        if elapsed > 0 {
            let rate = Double(progress.readings) / elapsed
            parts.append(rate >= 1e6 ? String(format: "%.2f M/s", rate / 1e6) : String(format: "%.0f k/s", rate / 1e3))
        }
        parts.append("\(grouped(progress.events)) events")
        return "fenceline: " + parts.joined(separator: " · ")
    }

    private static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
