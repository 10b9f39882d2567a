internal import CGEOS

/// One reentrant GEOS context: every geometry made through it belongs to it and dies before it.
///
/// GEOS contexts are not thread-safe, so a context is confined to one isolation domain (one engine,
/// one thread). Messages from GEOS's error handler are kept and turned into ``GEOSError`` values.
public final class GEOSContext {
    let handle: GEOSContextHandle_t
    private let messages: MessageBox

    /// Creates a context and installs the error and notice handlers.
    public init() {
        // GEOS_init_r returns a fresh context handle; it only fails when out of memory.
        guard let handle = GEOS_init_r() else { fatalError("GEOS_init_r could not allocate a context") }
        self.handle = handle
        self.messages = MessageBox()
        let box = Unmanaged.passUnretained(messages).toOpaque()
        // Both setters return the previous handler, which is of no interest here.
        _ = GEOSContext_setErrorMessageHandler_r(
            handle,
            { message, userdata in
                guard let userdata else { return }
                let box = Unmanaged<MessageBox>.fromOpaque(userdata).takeUnretainedValue()
                box.lastError = message.map { String(cString: $0) }
            }, box)
        _ = GEOSContext_setNoticeMessageHandler_r(handle, { _, _ in }, box)
    }

    deinit {
        // GEOS_finish_r releases the context; every geometry made from it is already gone,
        // because each holds a strong reference to its context.
        GEOS_finish_r(handle)
    }

    /// The GEOS version string, such as `"3.11.1-CAPI-1.17.1"`.
    public static var version: String {
        // GEOSversion returns a static string owned by the library.
        String(cString: GEOSversion())
    }

    /// Clears the last message before a call whose failure should be reported.
    func resetError() {
        messages.lastError = nil
    }

    /// An error for `operation` carrying the message GEOS sent during the call, if any.
    func error(_ operation: String) -> GEOSError {
        GEOSError(operation: operation, message: messages.lastError ?? "GEOS reported a failure without a message")
    }
}

@available(*, unavailable)
extension GEOSContext: Sendable {}

/// The mutable message slot the C handler writes into; it lives exactly as long as its context.
private final class MessageBox {
    var lastError: String?
}
