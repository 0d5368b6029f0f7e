import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import Synchronization

/// What the host trusts: snapshots signed by the board keys it was given, of its environment, not older than its anchor.
extension RemoteBoardSource {
    /// The view and statement of a signed snapshot, once it is verified: signed by a board key the host trusts, of
    /// `environment`, with its content, and not older than `anchor`. Keys the statement names are learned.
    func verified(_ envelope: SignedSnapshot, environment: String, anchor: AuditCheckpoint?) throws(BoardError) -> (
        HostView, SnapshotStatement
    ) {
        var keys = trusted.withLock { $0 }
        if keys.isEmpty, trustOnFirstUse, let offered = SnapshotStatement(text: envelope.statement)?.boardKeys, !offered.isEmpty {
            keys = offered
            logger.warning(
                "trusting the board key(s) \(offered.map { (try? SigningKeys.publicKey(base64: $0)).map { SigningKeys.keyID(publicKey: $0.rawRepresentation) } ?? "?" }.joined(separator: ", ")) of \(name) on first use; give the host the board's key instead (plugboard board-key show)"
            )
        }
        let (statement, content) = try envelope.verify(trusted: keys, environment: environment)
        if let minimum = minimumSequence, statement.head.seq < minimum {
            throw BoardError(
                .integrity,
                "the snapshot is of audit row \(statement.head.seq), below the minimum sequence \(minimum) this host was given: it is refused"
            )
        }
        if let anchor {
            if statement.head.seq < anchor.seq {
                throw BoardError(
                    .integrity,
                    "the snapshot is of audit row \(statement.head.seq), older than row \(anchor.seq) that this host already accepted: an older snapshot is refused"
                )
            }
            if statement.head.seq == anchor.seq, statement.head.hash != anchor.hash {
                throw BoardError(
                    .integrity,
                    "the snapshot is of another audit row \(anchor.seq) than the one this host accepted: another board, or a rewritten log")
            }
        }
        guard let content else { throw BoardError(.integrity, "the snapshot carries no content") }
        let view = try HostView.decode(content)
        guard view.registry.environment == environment else {
            throw BoardError(.integrity, "the snapshot's registry is of another environment than its statement")
        }
        learn(statement.boardKeys, trusting: keys)
        return (view, statement)
    }

    /// The snapshot the event stream pushed, once it is verified exactly as one read from the server
    /// (``verified(_:environment:anchor:)``: the board's key, `environment`, not older than `anchor`) and written to the
    /// cache; nil when none waits or it is refused (said in a warning), and the host reads a snapshot as without push.
    /// Only a host with an anchor takes one: a first state must be proven fresh for the host's own request.
    func takePushed(environment: String, anchor: AuditCheckpoint, version: BoardVersion) -> SourceSnapshot? {
        guard
            let (envelope, json) = state.withLock({ state -> (SignedSnapshot, Data)? in
                defer { state.pushed = nil }
                return state.view == nil ? nil : state.pushed
            })
        else { return nil }
        let (view, statement): (HostView, SnapshotStatement)
        do { (view, statement) = try verified(envelope, environment: environment, anchor: anchor) } catch {
            logger.warning("ignored a snapshot pushed by \(name): \(error.message); reading one instead")
            return nil
        }
        FanoutTrace.note("verified", "\(statement.head.seq) pushed")
        // Cached before the host acts on it, as a snapshot read.
        HostCache.write(cacheFolder, view: json, server: server.absoluteString, logger: logger)
        state.withLock {
            $0.validUntil = max($0.statement?.head == statement.head ? $0.validUntil ?? .distantPast : .distantPast, statement.expiresAt)
            $0.view = view
            $0.statement = statement
            // The next read asks for the host's own snapshot in full: its ETag is of another one.
            $0.viewRequest = nil
            $0.etag = nil
            $0.fetchedAt = Date()
            $0.failedReads = 0
        }
        return current(version: version)
    }

    /// The first state of a host without an anchor (`nonce` is the one its request sent; nil when it has an anchor):
    /// taken only when the server's freshness proof (`proof`, the header's value) is of this nonce and the snapshot's
    /// head, or when the operator accepted a first snapshot without one (`acceptStaleFirstSnapshot`, or a
    /// `minimumSequence` the snapshot reaches, checked in ``verified(_:environment:anchor:)``). Returns until when the
    /// proof vouches for the head.
    ///
    /// - Throws: ``PlugboardStore/BoardError`` `.integrity` saying why the snapshot cannot be the host's first state.
    func firstContact(_ statement: SnapshotStatement, nonce: String?, proof: String?, environment: String) throws(BoardError) -> Date? {
        guard let nonce else { return nil }
        do {
            return try FreshnessProof.verify(
                proof, trusted: trusted.withLock { $0 }, environment: environment, nonce: nonce, head: statement.head
            ).expiresAt
        } catch {
            if acceptStaleFirstSnapshot || minimumSequence != nil {
                logger.warning(
                    "taking a first snapshot of audit row \(statement.head.seq) from \(name) that is not proven fresh (\(error.message)), as configured"
                )
                return nil
            }
            let age =
                statement.expiresAt < Date()
                ? "expired at \(Timestamp.format(statement.expiresAt))" : "is not proven fresh (\(error.message))"
            throw BoardError(
                .integrity,
                "the snapshot of audit row \(statement.head.seq) \(age), and a host without an anchor takes only a snapshot proven fresh for its own request as its first state (a proxy may be replaying an older one); the host loads nothing from it and reads again"
            )
        }
    }

    /// Trusts the keys a verified statement names (a rotation the board made), and keeps them in the cache folder.
    func learn(_ named: [String], trusting keys: [String]) {
        let learned = trusted.withLock { trusted -> [String]? in
            let all = (trusted.isEmpty ? keys : trusted) + named.filter { !trusted.contains($0) && !keys.contains($0) }
            guard all != trusted else { return nil }
            trusted = all
            return all
        }
        guard let learned else { return }
        do { try HostCache.keepKeys(cacheFolder, learned) } catch {
            logger.warning("cannot keep the board keys in \(cacheFolder): \(error)")
        }
    }

    /// The snapshot the host has, as a ``PlugboardHost/SourceSnapshot``: stale when its signed word expired.
    func current(version: BoardVersion, unreachable: String? = nil) -> SourceSnapshot {
        state.withLock { state in
            let view = state.view!
            var stale: String?
            if let unreachable {
                stale = "a cached snapshot of \(Timestamp.format(state.fetchedAt ?? Date())) (\(name) is unreachable: \(unreachable))"
            } else if let until = state.validUntil, until < Date() {
                stale =
                    "a snapshot of audit row \(state.statement?.head.seq ?? 0) that expired at \(Timestamp.format(until)): nothing newer came from \(name) (the feed may be frozen)"
            }
            return SourceSnapshot(
                registry: view.registry, checks: view.checks, version: version, head: state.statement?.head, stale: stale,
                expiresAt: state.validUntil)
        }
    }

    /// A `fresh` notice from the event stream: renews the snapshot of the same head, or wakes the host to read a newer
    /// one. A notice that does not verify is ignored (and said).
    func fresh(_ data: String) {
        guard let environment = state.withLock({ $0.environment }) else { return }
        let statement: SnapshotStatement
        do {
            statement = try SignedSnapshot.verify(Data(data.utf8), trusted: trusted.withLock { $0 }, environment: environment).statement
        } catch {
            logger.warning("ignored a freshness notice from \(name): \(error.message)")
            return
        }
        let wake = state.withLock { state -> Bool in
            guard let known = state.statement?.head else { return false }
            if statement.head == known {
                let wasExpired = (state.validUntil ?? .distantPast) < Date()
                state.validUntil = max(state.validUntil ?? .distantPast, statement.expiresAt)
                if wasExpired { state.rereads += 1 }
                return wasExpired
            }
            if statement.head.seq > known.seq {
                state.rereads += 1
                return true
            }
            return false
        }
        if wake { changes.signal() }
    }
}
