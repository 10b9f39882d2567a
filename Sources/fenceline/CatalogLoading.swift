import ArgumentParser
import Fenceline
import FencelineFormats
import FencelineRun

/// Reads and decodes a catalog file, turning every failure into a CLI failure with its exit code.
func loadCatalog(path: String, decoder: CatalogDecoder, limit: CatalogLimit) throws -> CatalogDecoder.Decoded {
    try decodeCatalog(readCatalogBytes(path: path, limit: limit), path: path, decoder: decoder)
}

/// A catalog file's bytes (inflated when gzip), refused past `limit` or damaged.
func readCatalogBytes(path: String, limit: CatalogLimit) throws -> [UInt8] {
    let bytes: [UInt8]
    let reader: LineReader
    do throws(InputError) {
        reader = try LineReader(path: path)
        bytes = try reader.readAll(limit: limit.bytes)
    } catch  where error.code == .tooLarge {
        throw CommandFailure(
            status: ExitStatus.badInput, message: "\(error.description) (--max-catalog-mb raises the limit)")
    } catch {
        throw CommandFailure(error)
    }
    // Damage, or a compressed bomb, found while inflating.
    if let failure = reader.failure { throw CommandFailure(failure) }
    return bytes
}

/// Decodes the bytes of the catalog file at `path`, its errors located in that file.
func decodeCatalog(_ bytes: [UInt8], path: String, decoder: CatalogDecoder) throws -> CatalogDecoder.Decoded {
    do {
        return try decoder.decode(bytes)
    } catch {
        let lines = error.issues.map { "\(path): \($0)" }
        throw CommandFailure(status: ExitStatus.badInput, message: lines.joined(separator: "\n"))
    }
}

/// `--max-catalog-mb`: the most a catalog may hold, inflated, so `--triggers /dev/zero` or a
/// compressed bomb is refused in bounded memory rather than read until memory runs out. The
/// default keeps such a refusal under 1 GiB: a stream of unknown size is read into an array that
/// doubles, so reading up to the cap holds about one and a half times it for a moment.
struct CatalogLimit: ParsableArguments {
    @Option(
        name: .customLong("max-catalog-mb"), parsing: .unconditional,
        help: ArgumentHelp("The largest catalog read, in MiB (inflated, for .gz).", valueName: "MiB"))
    var megabytes = 256

    var bytes: Int { megabytes.multipliedReportingOverflow(by: 1 << 20).overflow ? .max : megabytes << 20 }

    func validate() throws {
        guard megabytes >= 1 else { throw ValidationError("--max-catalog-mb must be ≥ 1") }
    }
}
