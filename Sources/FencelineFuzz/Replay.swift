#if !FUZZING
import Foundation

/// Built without -sanitize=fuzzer there is no libFuzzer to call the targets: the files given are
/// replayed instead, so an input Tools/fuzz kept can be stepped through in a debugger.
@main
enum Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            print(usage(unknown: nil), terminator: "")
            exit(arguments.isEmpty ? 0 : 64)
        }
        let harness = FuzzHarness()
        for path in arguments.dropFirst() {
            guard let contents = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("fenceline-fuzz: cannot read \(path)\n".utf8))
                exit(66)
            }
            Array(contents).withUnsafeBufferPointer { harness.run(target, $0) }
            print("\(path): ok")
        }
    }
}
#endif
