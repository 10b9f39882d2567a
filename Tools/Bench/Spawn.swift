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

    /// The seconds a command spends past its start-up: `times` pairs of the `full` command and the
    /// `startOnly` one (the same start, nothing after), run back to back, and the median of the
    /// pairs' differences. A pair runs in the same stretch of this machine's slow and fast spells,
    /// so its difference is steadier than that of two separate best times. Also the fastest full
    /// run, with the largest peak memory of any; a failing run ends it and is returned.
    static func beyondStart(of times: Int, _ path: String, full: [String], startOnly: [String]) throws -> (
        seconds: Double, full: Spawned
    ) {
        var differences: [Double] = []
        var fastest: Spawned?
        for _ in 0..<max(1, times) {
            let whole = try run(path, full)
            guard whole.status == 0 else { return (0, whole) }
            let start = try run(path, startOnly)
            guard start.status == 0 else { return (0, start) }
            differences.append(whole.seconds - start.seconds)
            if var best = fastest {
                best.seconds = min(best.seconds, whole.seconds)
                best.peakKilobytes = max(best.peakKilobytes, whole.peakKilobytes)
                fastest = best
            } else {
                fastest = whole
            }
        }
        differences.sort()
        return (max(1e-9, differences[differences.count / 2]), fastest!)
    }

    static func run(_ path: String, _ arguments: [String]) throws -> Spawned {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let start = DispatchTime.now().uptimeNanoseconds
        let spawned = posix_spawn(&pid, path, nil, nil, argv, environ)
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
