import Foundation

extension Fixtures {
    /// `bytes` as Debian's `gzip -<level>` compresses them from a named file (so the header
    /// carries the name): the tests' gzip inputs come from the real tool, not from the library
    /// that inflates them.
    public static func gzip(_ bytes: [UInt8], level: Int = 6) throws -> [UInt8] {
        let plain = Scratch.root.appendingPathComponent("plain-\(UUID().uuidString).txt")
        try Data(bytes).write(to: plain)
        defer { try? FileManager.default.removeItem(at: plain) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-\(level)", "-c", plain.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }
}
