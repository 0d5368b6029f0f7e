import Crypto
import Foundation
import PlugboardModel
import PlugboardStore
import Synchronization

/// The console's sign-in sessions: a person signs in with an access token, which is exchanged for a session cookie.
///
/// A session lives in this process's memory only (a restart signs everyone out). The cookie holds a random 256-bit
/// session id; the server keeps its SHA-256, so the table holds nothing a cookie could be made from. The session keeps
/// the access token it was opened with, in memory, so that every request looks that token up on the board again:
/// a revoked or expired token (or one whose maker's was revoked) ends its sessions at their next request, exactly as it
/// ends the operations API's. Each session has its own CSRF token, which every form carries.
final class ConsoleSessions: Sendable {
    /// One signed-in person.
    struct Session: Sendable {
        /// The access token's secret, to look it up on the board at each request (never logged, never written).
        let secret: String
        /// The token's name and principal, for the page's header.
        let tokenName: String
        let principal: String
        let readOnly: Bool
        /// What every form of this session carries.
        let csrf: String
        let created: ContinuousClock.Instant
        var lastSeen: ContinuousClock.Instant
        /// A message for the next page (the answer of the last change), shown once.
        var flash: Flash?
    }

    /// A sentence for the next page, and whether it reports a refusal.
    struct Flash: Sendable {
        let text: String
        let failed: Bool
    }

    /// The cookie's name.
    static let cookie = "plugboard_console"
    /// The cookie of the sign-in form's CSRF token, on the sign-in path only.
    static let signInCookie = "plugboard_console_signin"
    /// How long a session lasts at most, and without a request.
    static let lifetime = Duration.seconds(8 * 3600)
    static let idle = Duration.seconds(3600)
    /// The most sessions kept at once; the oldest go first.
    static let limit = 10_000

    private let sessions = Mutex<[String: Session]>([:])
    private let clock = ContinuousClock()

    /// Opens a session for an accepted access token; answers the cookie's value (the session id).
    func open(secret: String, tokenName: String, principal: String, readOnly: Bool) -> (id: String, session: Session) {
        let id = Self.random()
        let now = clock.now
        let session = Session(
            secret: secret, tokenName: tokenName, principal: principal, readOnly: readOnly, csrf: Self.random(), created: now,
            lastSeen: now, flash: nil)
        sessions.withLock { sessions in
            if sessions.count >= Self.limit {
                let expired = sessions.filter { !Self.alive($0.value, at: now) }.map(\.key)
                for key in expired { sessions[key] = nil }
                if sessions.count >= Self.limit, let oldest = sessions.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key {
                    sessions[oldest] = nil
                }
            }
            sessions[Self.key(id)] = session
        }
        return (id, session)
    }

    /// The session of a cookie's value, still alive (its use noted), or nil.
    func session(_ id: String) -> Session? {
        guard id.utf8.count == 43 else { return nil }
        let key = Self.key(id)
        let now = clock.now
        return sessions.withLock { sessions in
            guard var session = sessions[key] else { return nil }
            guard Self.alive(session, at: now) else {
                sessions[key] = nil
                return nil
            }
            session.lastSeen = now
            sessions[key] = session
            return session
        }
    }

    /// Whether the session is still alive, without counting this as its use (the live stream asks often, and an open
    /// tab alone must not keep a session from its idle end).
    func isOpen(_ id: String) -> Bool {
        let key = Self.key(id)
        let now = clock.now
        return sessions.withLock { $0[key].map { Self.alive($0, at: now) } ?? false }
    }

    /// Ends a session (sign-out, or its token no longer accepted).
    func close(_ id: String) {
        let key = Self.key(id)
        _ = sessions.withLock { $0.removeValue(forKey: key) }
    }

    /// Leaves a message for the session's next page.
    func flash(_ id: String, _ flash: Flash) {
        let key = Self.key(id)
        sessions.withLock { $0[key]?.flash = flash }
    }

    /// Takes the session's message, once.
    func takeFlash(_ id: String) -> Flash? {
        let key = Self.key(id)
        return sessions.withLock { sessions in
            let flash = sessions[key]?.flash
            sessions[key]?.flash = nil
            return flash
        }
    }

    private static func alive(_ session: Session, at now: ContinuousClock.Instant) -> Bool {
        now - session.created < lifetime && now - session.lastSeen < idle
    }

    /// 32 random bytes, base64url without padding (43 characters), as token secrets are made.
    static func random() -> String { APITokenSecret.randomPart() }

    private static func key(_ id: String) -> String { SHA256.hex(Data(id.utf8)) }
}
