import Foundation
import Logging
import NIOCore
import PlugboardModel
import PlugboardStore
import Synchronization

/// Pushed snapshots: the change itself on the host stream, signed once per change for every stream of an environment.
///
/// A `changed` event for a stream that asked for it (`GET /api/host/stream?push=snapshot`) carries, beside the
/// revision, the environment's snapshot as ``PlugboardModel/SignedSnapshot`` JSON: `{"revision": N, "snapshot": {…}}`.
/// It is the snapshot of every registered plug-in (those not enabled in the environment without releases), so it holds
/// what any host of the environment would read for itself, whatever plug-ins it names; a host verifies it exactly as a
/// snapshot it read (the board's key, its environment, not older than its anchor) and acts without a request. The
/// same bytes go to every stream: the server's work per change does not grow with the number of streams beyond the
/// writes. A board of more than ``pushPluginLimit`` registered plug-ins, or a snapshot larger than ``pushLimit``, is
/// not pushed: every stream would carry the whole registry, so its hosts read their own (smaller) snapshots instead.
extension HostFeeds {
    /// The largest signed snapshot carried on an event.
    static let pushLimit = 512 << 10
    /// The most registered plug-ins a pushed snapshot lists.
    static let pushPluginLimit = 2000

    /// The environment's snapshot of every registered plug-in, signed, when it is read at `version` (the version the
    /// change was seen at) and not larger than ``pushLimit``; nil otherwise (the hosts then read their own).
    func pushSnapshot(_ environment: String, at version: BoardVersion) -> Data? {
        let read: (value: Data, version: BoardVersion?)
        do {
            read = try atOneVersion { () throws(BoardError) in
                let ids = try board.registeredPluginIDs()
                guard ids.count <= Self.pushPluginLimit else { return Data() }
                let (view, head) = try board.hostView(environment: environment, relevantTo: ids)
                return signed(environment, head: head, content: view.encoded())
            }
        } catch {
            logger.warning(
                "cannot sign the snapshot pushed to hosts", metadata: ["environment": "\(environment)", "error": "\(error.message)"])
            return nil
        }
        guard read.version == version, !read.value.isEmpty, read.value.count <= Self.pushLimit else { return nil }
        FanoutTrace.note("signed", "\(environment) \(read.value.count) bytes")
        return read.value
    }

    /// The `changed` event of `revision` that carries `envelope` (signed snapshot JSON, one line).
    static func pushEvent(revision: Int, envelope: Data) -> ByteBuffer {
        ServerSentEvent.frame("changed", id: revision, data: pushData(revision: revision, envelope: envelope))
    }

    /// The data of the `changed` event of `revision` that carries `envelope`.
    static func pushData(revision: Int, envelope: Data) -> String {
        "{\"revision\":\(revision),\"snapshot\":" + String(decoding: envelope, as: UTF8.self) + "}"
    }

    /// Publishes the events of `environment` to the relay from now on (at the server's start for the environments with
    /// a hosts token, and when a host is authenticated for the relay's stream of it): the relay is the environment's one upstream stream, whatever the number of hosts reading it. The next
    /// False when the server publishes to no relay.
    @discardableResult
    func relayEnvironment(_ environment: String) throws(BoardError) -> Bool {
        guard relay != nil else { return false }
        if state.withLock({ $0.feeds[environment]?.relayed == true }) { return true }
        let read = try atOneVersion { () throws(BoardError) in try digest(environment) }
        let added = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            if state.feeds[environment] == nil {
                state.feeds[environment] = Feed(digest: read.value, version: read.version, revision: firstRevision)
            }
            guard state.feeds[environment]?.relayed == false else { return false }
            state.feeds[environment]!.relayed = true
            return true
        }
        if added {
            metrics.relayChannels.add(1)
            logger.info("publishing the hosts' events of an environment to the relay", metadata: ["environment": "\(environment)"])
        }
        return true
    }

    /// Notes that the relay checked `token` for a stream of its environment (see ``relayedTokens``).
    func noteRelayed(_ token: APITokenCredential) {
        relayedTokens.withLock { $0[token.digest] = token.environment }
    }

    /// Ends the relay's streams of every environment with a token the relay checked and `refusal` now refuses: the
    /// relay checks a token only when a host subscribes, so the environment's channel is deleted, and every host of it
    /// subscribes again with its token checked.
    func endRelayedStreams(refusal: ([UInt8]) -> String?) {
        guard let relay else { return }
        let environments = relayedTokens.withLock { tokens -> Set<String> in
            let refused = tokens.filter { refusal($0.key) != nil }
            for token in refused.keys { tokens[token] = nil }
            return Set(refused.values)
        }
        for environment in environments.sorted() {
            logger.info(
                "ending the relay's streams of an environment: the board refuses a token the relay checked",
                metadata: ["environment": "\(environment)"])
            relay.drop(environment)
        }
    }
}
