#if FUZZING
    import Foundation

    /// libFuzzer's own driver, for a program that keeps its `main` (SwiftPM renames an executable's
    /// entry point and points `main` at it, so libFuzzer's `main` is never the one linked).
    @_extern(c, "LLVMFuzzerRunDriver")
    private func runLibFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// The target and its harness. libFuzzer runs inputs one at a time on one thread, so the state
    /// needs no lock.
    nonisolated(unsafe) private var fuzzing: (target: FuzzTarget, harness: FuzzHarness)?

    /// One input; 0 to go on (a broken invariant traps instead). libFuzzer's archive refers to it by
    /// this name, so it is defined even though the driver is handed it directly.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        guard let fuzzing else { return 0 }
        fuzzing.harness.run(fuzzing.target, UnsafeBufferPointer(start: size > 0 ? data : nil, count: size))
        return 0
    }

    extension FuzzMain {
        static func runLibFuzzer() -> Never {
            let name = ProcessInfo.processInfo.environment["FENCELINE_FUZZ_TARGET"] ?? ""
            guard let target = FuzzTarget(rawValue: name) else {
                FileHandle.standardError.write(
                    Data("unknown or missing FENCELINE_FUZZ_TARGET \"\(name)\"\n\n\(usage())".utf8))
                exit(64)
            }
            fuzzing = (target, FuzzHarness())
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runLibFuzzerDriver(&argc, &argv, fuzzOneInput))
        }
    }
#endif
