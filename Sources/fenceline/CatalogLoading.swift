import Fenceline
import FencelineFormats
import FencelineRun

/// The whole of a file (gzip looked through), a failure to read it a CLI failure (exit 66 when
/// it is missing, 65 when it is damaged).
func readWholeFile(_ path: String) throws -> [UInt8] {
    do throws(InputError) {
        let reader = try LineReader(path: path)
        let bytes = try reader.readAll()
        if let failure = reader.failure { throw failure }
        return bytes
    } catch {
        throw CommandFailure(error)
    }
}

/// Reads and decodes a catalog file, turning every failure into a CLI failure with its exit code.
func loadCatalog(path: String, decoder: CatalogDecoder) throws -> CatalogDecoder.Decoded {
    let bytes = try readWholeFile(path)
    do {
        return try decoder.decode(bytes)
    } catch {
        let lines = error.issues.map { "\(path): \($0)" }
        throw CommandFailure(status: ExitStatus.badInput, message: lines.joined(separator: "\n"))
    }
}
