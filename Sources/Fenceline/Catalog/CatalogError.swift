/// One invalid value in a catalog or an added request: which request, where, and what is wrong.
public struct CatalogIssue: Hashable, Sendable, CustomStringConvertible {
    /// The request's id, when it has one.
    public var requestID: String?
    /// The JSON path of the offending value, such as `requests[1].trigger.radius`.
    public var path: String
    /// What is wrong and how to fix it.
    public var message: String

    /// Creates an issue.
    public init(requestID: String?, path: String, message: String) {
        self.requestID = requestID
        self.path = path
        self.message = message
    }

    public var description: String {
        let request = requestID.map { "request \"\($0)\": " } ?? ""
        return path.isEmpty ? "\(request)\(message)" : "\(request)\(path): \(message)"
    }
}

/// Every issue found in a catalog; thrown when any request is invalid.
public struct CatalogError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The issues in catalog order.
    public var issues: [CatalogIssue]

    /// Creates an error from its issues.
    public init(issues: [CatalogIssue]) {
        self.issues = issues
    }

    public var description: String { issues.map(\.description).joined(separator: "\n") }
}
