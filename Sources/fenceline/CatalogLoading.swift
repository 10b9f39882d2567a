import Fenceline
import FencelineFormats
import FencelineRun

/// Reads and decodes a catalog file, turning every failure into a CLI failure with its exit code.
func loadCatalog(path: String, decoder: CatalogDecoder) throws -> CatalogDecoder.Decoded {
    let bytes: [UInt8]
    do throws(InputError) {
        let reader = try LineReader(path: path)
        bytes = try reader.readAll()
        if let failure = reader.failure { throw failure }
    } catch {
        throw CommandFailure(error)
    }
    do {
        return try decoder.decode(bytes)
    } catch {
        let lines = error.issues.map { "\(path): \($0)" }
        throw CommandFailure(status: ExitStatus.badInput, message: lines.joined(separator: "\n"))
    }
}
