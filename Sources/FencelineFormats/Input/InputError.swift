/// A problem with an input file: what kind, where (file, line, field), and how to fix it.
///
/// Its description is the `file:line: reason` form SPEC §3.4 asks for.
public struct InputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is; the CLI maps codes to exit statuses.
    public enum Code: String, Hashable, Sendable {
        /// A line is not valid JSON or CSV.
        case malformed
        /// A field is missing, has the wrong type, or is out of range.
        case invalidField
        /// A control record's request is invalid.
        case invalidRequest
        /// A line is longer than the reader accepts.
        case lineTooLong
        /// The file does not exist.
        case fileMissing
        /// The file exists but cannot be read.
        case unreadable
        /// The input format cannot be told or is not supported.
        case unsupportedFormat
        /// The input is larger than the reader accepts (a whole-file read over its cap, or a
        /// compressed stream that inflates like a bomb).
        case tooLarge
    }

    public var code: Code
    /// The file's name as given (`-` for standard input).
    public var file: String
    /// The 1-based line, when the problem is on one.
    public var line: Int?
    /// The field, when one is to blame.
    public var field: String?
    /// What is wrong, said so that it can be fixed.
    public var message: String

    /// Creates an error.
    public init(code: Code, file: String, line: Int? = nil, field: String? = nil, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.field = field
        self.message = message
    }

    public var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        let subject = field.map { "field \"\($0)\": " } ?? ""
        return "\(location): \(subject)\(message)"
    }
}

/// A problem found in one line, before the reader knows the file and line number.
public struct LineError: Error, Hashable, Sendable {
    public var code: InputError.Code
    public var field: String?
    public var message: String

    /// Creates a line error.
    public init(code: InputError.Code = .invalidField, field: String? = nil, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    /// The error placed at `file`:`line`.
    public func located(file: String, line: Int) -> InputError {
        InputError(code: code, file: file, line: line, field: field, message: message)
    }
}
