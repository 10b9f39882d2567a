import Foundation

#if FUZZING
/// The target `FENCELINE_FUZZ_TARGET` names and the harness, made at the first input. libFuzzer
/// runs its inputs one at a time on one thread, so the state needs no lock.
nonisolated(unsafe) private var fuzzing: (target: FuzzTarget, harness: FuzzHarness)?

/// libFuzzer's entry point: one input, 0 to keep going (a broken invariant traps instead).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    if fuzzing == nil {
        let name = ProcessInfo.processInfo.environment["FENCELINE_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data((usage(unknown: name) + "\n").utf8))
            exit(2)
        }
        fuzzing = (target, FuzzHarness())
    }
    fuzzing!.harness.run(fuzzing!.target, UnsafeBufferPointer(start: size > 0 ? data : nil, count: size))
    return 0
}
#endif

/// What the binary reads and how it is run.
func usage(unknown name: String?) -> String {
    var text = ""
    if let name { text += "unknown or missing FENCELINE_FUZZ_TARGET \"\(name)\"\n\n" }
    text += """
        fenceline-fuzz: libFuzzer targets for Fenceline's parsers. Tools/fuzz builds them with
        -sanitize=fuzzer,address and runs each with its seed corpus; FENCELINE_FUZZ_TARGET picks one.
        Built without fuzzing (swift build), it replays inputs instead:

          fenceline-fuzz TARGET FILE...

        Targets:

        """
    for target in FuzzTarget.allCases {
        text += "  " + target.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0) + target.summary + "\n"
    }
    return text
}
