import Foundation

/// Built by Tools/fuzz (`-D FUZZING -sanitize=fuzzer,address`) the binary hands over to libFuzzer
/// with the target `FENCELINE_FUZZ_TARGET` names; a plain build replays the files it is given.
@main
enum FuzzMain {
    static func main() {
        #if FUZZING
            runLibFuzzer()
        #else
            replay(CommandLine.arguments.dropFirst())
        #endif
    }

    /// What the binary reads and how it is run.
    static func usage() -> String {
        var text = """
            fenceline-fuzz: libFuzzer targets for Fenceline's parsers. Tools/fuzz builds it with
            -sanitize=fuzzer,address and runs one target at a time, named by FENCELINE_FUZZ_TARGET:

              FENCELINE_FUZZ_TARGET=TARGET fenceline-fuzz [libFuzzer flags] [CORPUS_DIR | INPUT]...

            Built without fuzzing (swift build), it replays inputs instead:

              fenceline-fuzz TARGET FILE...
              fenceline-fuzz seal INPUT CHECKPOINT   (the file the checkpoint target loads for INPUT)

            Targets:

            """
        for target in FuzzTarget.allCases {
            text += "  " + target.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0) + target.summary + "\n"
        }
        return text
    }
}
