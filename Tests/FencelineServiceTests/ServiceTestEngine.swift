import FencelineFormats
import Logging

@testable import FencelineService

extension ServiceEngine {
    /// A service engine over the store in `directory` with `catalog`'s bytes, as `fenceline serve`
    /// opens one (the catalog decoded by the catalog decoder), for the tests that drive it directly.
    static func opened(
        _ directory: String, catalog: [UInt8], settings: Settings = Settings(), label: String = "test"
    ) throws -> ServiceEngine {
        try ServiceEngine(
            store: try ServiceStore(directory: directory), catalogBytes: catalog,
            decodeCatalog: { try CatalogDecoder().decode($0).catalog }, settings: settings, metrics: ServiceMetrics(),
            logger: Logger(label: label))
    }
}
