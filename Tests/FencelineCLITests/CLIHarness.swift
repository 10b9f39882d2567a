import Foundation
import TestSupport

/// Runs the built `fenceline` binary and captures what it did.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

enum CLI {
    static let binary = Fixtures.packageRoot.appendingPathComponent(".build/debug/fenceline")

    /// Runs the binary (or `executable`) with `arguments`; `environment` adds to (or replaces in)
    /// this process's.
    static func run(
        _ arguments: [String], stdin: String? = nil, in directory: URL = Fixtures.packageRoot,
        environment: [String: String] = [:], executable: URL = binary
    ) throws -> CLIResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = directory
        // Files rather than pipes: a large output can never block the child.
        let directory = try temporaryDirectory()
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outURL)
        let errors = try FileHandle(forWritingTo: errURL)
        let input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        try output.close()
        try errors.close()
        let outData = try Data(contentsOf: outURL)
        let errData = try Data(contentsOf: errURL)
        return CLIResult(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Starts the binary with `arguments` in the package root and returns at once (for tests
    /// that signal it): its output and errors go to files in `directory`, its input is `stdin`.
    static func start(_ arguments: [String], in directory: URL, stdin: Pipe? = nil) throws -> (
        process: Process, stdout: URL, stderr: URL
    ) {
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = binary
        process.currentDirectoryURL = Fixtures.packageRoot
        process.arguments = arguments
        if let stdin { process.standardInput = stdin }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        return (process, outURL, errURL)
    }

    /// A fresh temporary folder.
    static func temporaryDirectory() throws -> URL {
        let url = Scratch.root.appendingPathComponent("fenceline-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

extension CLI {
    /// Runs `script` with bash (`$0`, `$1`… are `arguments`) and captures its output.
    static func runShell(_ script: String, arguments: [String]) throws -> CLIResult {
        try run(["-c", script] + arguments, executable: URL(fileURLWithPath: "/bin/bash"))
    }
}
