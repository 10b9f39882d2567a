import FencelineFormats
import FencelineRun

#if canImport(Glibc)
    import Glibc
#endif

extension FuzzHarness {
    /// A gzip stream as a `.gz` file (in memory, under /dev/shm): read whole, as a catalog is, and
    /// in blocks of lines, as a run reads readings. Both must give the same bytes and stop at the
    /// same damage; a block ends at a newline; the blocks stop short of the whole content only by
    /// the line the damage cut off.
    func fuzzGzip(_ input: UnsafeBufferPointer<UInt8>) {
        let path = "/dev/shm/fenceline-fuzz-gzip-\(getpid())"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        require(descriptor >= 0, "cannot write \(path)")
        defer { unlink(path) }
        var written = 0
        while written < input.count {
            let count = write(descriptor, input.baseAddress! + written, input.count - written)
            require(count > 0, "write to \(path) failed")
            written += count
        }
        close(descriptor)
        // Large enough for anything a bomb check lets through from a few KiB of input.
        let limit = 1 << 30

        var whole: [UInt8] = []
        var wholeFailure: InputError?
        do throws(InputError) {
            let reader = try LineReader(path: path)
            whole = try reader.readAll(limit: limit)
            wholeFailure = reader.failure
        } catch {
            wholeFailure = error
        }

        var blocks: [UInt8] = []
        var blocksFailure: InputError?
        do {
            let reader = try LineReader(path: path)
            try reader.forEachBlock(blockSize: 4096) { block, _ in
                let newlines = block.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                require(
                    block.last == 0x0A || blocks.count + block.count == whole.count,
                    "a block that is not the last ends without a newline")
                blocks += block
                return newlines + (block.last == 0x0A ? 0 : 1)
            }
            blocksFailure = reader.failure
        } catch let error as InputError {
            blocksFailure = error
        } catch {
            require(false, "reading in blocks threw \(error)")
        }

        require(
            wholeFailure?.message == blocksFailure?.message,
            "read whole: \(String(describing: wholeFailure)); in blocks: \(String(describing: blocksFailure))")
        if let failure = wholeFailure, input.count >= 2, input[0] == 0x1F, input[1] == 0x8B {
            require(failure.message.contains("gzip"), "a gzip input's damage reads \(failure.message)")
        }
        require(blocks.count <= whole.count, "the blocks hold more than the whole content")
        require(Array(whole[..<blocks.count]) == blocks, "the blocks differ from the whole content")
        if wholeFailure == nil {
            require(blocks == whole, "the blocks stop short of an undamaged input's content")
        } else {
            require(!whole[blocks.count...].contains(0x0A), "the blocks left out a whole line before the damage")
        }
    }
}
