import Foundation

/// Runs a program to its end and reports its wall time and peak resident memory.
///
/// The peak is the child's own `VmHWM`, polled from /proc while it runs: `wait4`'s `ru_maxrss`
/// would include this (large) benchmark process, whose address space the spawned child shares
/// until `exec` and whose high-water mark Linux carries across it.
struct Spawned {
    var status: Int32
    var seconds: Double
    var peakKilobytes: Int

    /// The streaming phase of `fenceline run`, timed by the run itself (`--timings`: from the
    /// first applied reading, after the catalog is loaded and added, to the end), for each
    /// argument list: `times` runs, the fastest, as for the library figures, since this machine's
    /// noise can only slow a run. The lists' runs take turns (one of each, then again), so figures
    /// compared with each other (two threads against one) are measured over the same stretch of
    /// the machine's changing speed rather than one after the other. Also the fastest whole run,
    /// with the largest peak memory of any; a failing run ends it and is returned.
    static func streaming(of times: Int, _ path: String, _ argumentLists: [[String]]) throws -> [Streamed] {
        var results: [Streamed?] = Array(repeating: nil, count: argumentLists.count)
        let log = NSTemporaryDirectory() + "fenceline-bench-\(getpid()).stderr"
        defer { try? FileManager.default.removeItem(atPath: log) }
        for _ in 0..<max(1, times) {
            for (index, arguments) in argumentLists.enumerated() {
                let spawned = try run(path, arguments + ["--timings"], standardError: log)
                guard spawned.status == 0 else {
                    // This list's failure ends the measurement; lists not run yet carry it too,
                    // so no caller reads a figure that was never measured.
                    results[index] = Streamed(readings: 0, seconds: 0, cpu: 0, whole: spawned)
                    return results.map { $0 ?? Streamed(readings: 0, seconds: 0, cpu: 0, whole: spawned) }
                }
                let text = try String(contentsOfFile: log, encoding: .utf8)
                guard let timed = timings(in: text) else {
                    throw NSError(
                        domain: "bench", code: 1,
                        userInfo: [NSLocalizedDescriptionKey: "no timings line from \(path): \(text)"])
                }
                guard var best = results[index] else {
                    results[index] = Streamed(
                        readings: timed.readings, seconds: max(1e-9, timed.seconds), cpu: timed.cpu, whole: spawned)
                    continue
                }
                if timed.seconds < best.seconds {
                    (best.readings, best.seconds, best.cpu) = (timed.readings, max(1e-9, timed.seconds), timed.cpu)
                }
                best.whole.seconds = min(best.whole.seconds, spawned.seconds)
                best.whole.peakKilobytes = max(best.whole.peakKilobytes, spawned.peakKilobytes)
                results[index] = best
            }
        }
        return results.map { $0! }
    }

    /// What ``streaming(of:_:_:)`` measures of one argument list.
    struct Streamed {
        var readings: Int
        var seconds: Double
        var cpu: Double
        var whole: Spawned
    }

    /// The figures of a `fenceline: timings: N readings after the first in W s wall, C s CPU` line.
    static func timings(in text: String) -> (readings: Int, seconds: Double, cpu: Double)? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("fenceline: timings: ") })
        else { return nil }
        let words = line.split(separator: " ")
        guard words.count >= 14, let readings = Int(words[2]), let wall = Double(words[8]),
            let cpu = Double(words[11])
        else { return nil }
        return (readings, wall, cpu)
    }

    /// Runs `path` with `arguments`, its standard error sent to the file `standardError` when given.
    static func run(_ path: String, _ arguments: [String], standardError: String? = nil) throws -> Spawned {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardError {
            posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw NSError(
                domain: "bench", code: Int(spawned), userInfo: [NSLocalizedDescriptionKey: "cannot run \(path)"])
        }
        var status: Int32 = 0
        var peak = 0
        while true {
            if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
            {
                peak = max(peak, kilobytes)
            }
            if waitpid(pid, &status, WNOHANG) == pid { break }
            usleep(5_000)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Spawned(status: status, seconds: seconds, peakKilobytes: peak)
    }
}
