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
///
/// Each issue is reported as `file:line: request "id": path: message`, the line being that of
/// the offending value (or of the deepest value around it that is there, for a missing member),
/// in the `file:line: reason` shape of the readings' bad lines. A syntax error carries its own
/// line and column in its message, so it is reported as `file: line L, column C: …`.
func decodeCatalog(_ bytes: [UInt8], path: String, decoder: CatalogDecoder) throws -> CatalogDecoder.Decoded {
    do {
        return try decoder.decode(bytes)
    } catch {
        let reports = located(error.issues, in: bytes, path: path, label: "")
        throw CommandFailure(status: ExitStatus.badInput, message: reports.joined(separator: "\n"))
    }
}

/// A catalog's warnings, each as `file:line: warning: request "id": path: message`, located as
/// ``decodeCatalog(_:path:decoder:)`` locates errors.
func catalogWarnings(_ warnings: [CatalogIssue], in bytes: [UInt8], path: String) -> [String] {
    warnings.isEmpty ? [] : located(warnings, in: bytes, path: path, label: "warning: ")
}

/// `issues` as lines naming the file and, where it can be told, the line of each.
private func located(_ issues: [CatalogIssue], in bytes: [UInt8], path: String, label: String) -> [String] {
    let lines = JSONPathLine.lines(of: issues.map(\.path), in: bytes)
    return zip(issues, lines).map { issue, line in
        line.map { "\(path):\($0): \(label)\(issue)" } ?? "\(path): \(label)\(issue)"
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
