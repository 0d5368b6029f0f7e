import AsyncHTTPClient
import Synchronization

/// Connections kept open between calls of an ``OutboundHTTP`` to one party (a webhook endpoint that is sent event
/// after event), instead of a connection opened and closed for every call.
///
/// The client that holds them is kept for as long as the calls go to the same checked address with the same bounds:
/// every call still resolves and checks the host first, and a call whose host now resolves elsewhere gets a new
/// client (the old one is shut down), so a kept connection never outlives the check that allowed it. ``close()``
/// ends them; a holder calls it when it is done with the party.
public final class OutboundConnections: Sendable {
    private let kept = Mutex<(key: String, client: HTTPClient)?>(nil)
    /// The event loop the connections run on; nil for the process's shared ones.
    let eventLoop: OutboundEventLoop?

    /// No connection yet: the first call opens one, on the process's shared event loops.
    public init() {
        eventLoop = nil
    }

    /// No connection yet: the first call opens one, on `eventLoop` (which must outlive them: ``close()`` first).
    package init(on eventLoop: OutboundEventLoop) {
        self.eventLoop = eventLoop
    }

    // A holder that forgot ``close()`` leaks nothing: the client is shut down without waiting.
    deinit { kept.withLock { $0?.client }.map { _ = $0.shutdown() } }

    /// The client for calls described by `key` (the checked address and the bounds), made by `make` when there is
    /// none for it; a client kept for another key is shut down.
    func client(for key: String, make: () -> HTTPClient) async -> HTTPClient {
        let (client, retired) = kept.withLock { kept -> (HTTPClient, HTTPClient?) in
            if let kept, kept.key == key { return (kept.client, nil) }
            let retired = kept?.client
            let client = make()
            kept = (key, client)
            return (client, retired)
        }
        try? await retired?.shutdown()
        return client
    }

    /// Closes every kept connection; a later call opens a new one.
    public func close() async {
        let retired = kept.withLock { kept in
            defer { kept = nil }
            return kept?.client
        }
        try? await retired?.shutdown()
    }
}
