#if !FUZZING
    import Foundation

    extension FuzzMain {
        /// Runs `TARGET FILE...` without libFuzzer, so an input Tools/fuzz kept can be stepped through
        /// in a debugger or checked after a fix.
        static func replay(_ arguments: ArraySlice<String>) {
            if arguments.first == "seal", arguments.count == 3 {
                return seal(arguments.dropFirst().first!, to: arguments.last!)
            }
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
                print(usage(), terminator: "")
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

        /// Writes the checkpoint the `checkpoint` target made of an input (its state under a correct
        /// header), so that a finding can be reproduced with `fenceline run --resume` or `inspect`.
        static func seal(_ path: String, to output: String) {
            guard let contents = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("fenceline-fuzz: cannot read \(path)\n".utf8))
                exit(66)
            }
            let checkpoint = FuzzHarness.seal(FuzzHarness.state(of: Array(contents)))
            guard FileManager.default.createFile(atPath: output, contents: Data(checkpoint)) else {
                FileHandle.standardError.write(Data("fenceline-fuzz: cannot write \(output)\n".utf8))
                exit(73)
            }
        }
    }
#endif
