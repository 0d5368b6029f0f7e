import Crypto
import Foundation
import PlugboardModel
import PlugboardStore
import Synchronization

/// The console's sign-in sessions: a person signs in with an access token, or with the identity provider, and gets a
/// session cookie.
///
/// A session lives in this process's memory only (a restart signs everyone out). The cookie holds a random 256-bit
/// session id; the server keeps its SHA-256, so the table holds nothing a cookie could be made from. The session keeps
/// the access token it was opened with, in memory, so that every request looks that token up on the board again:
/// a revoked or expired token (or one whose maker's was revoked) ends its sessions at their next request, exactly as it
/// ends the operations API's. Each session has its own CSRF token, which every form carries.
///
/// Bounded per person: one access token holds at most ``perToken`` sessions and one principal ``perPrincipal`` (a new
/// sign-in ends the token's, or the principal's, least recently used one), and sign-ins are counted per token and per
/// principal (``signInsPerToken``, ``signInsPerPrincipal`` a minute). The table holds at most ``limit`` sessions; when
/// it is full of live sessions a sign-in is refused: one principal's sign-ins never end another's session.
final class ConsoleSessions: Sendable {
    /// One signed-in person.
    struct Session: Sendable {
        /// How the person signed in, checked on the board again at each request.
        let credential: Credential
        /// Which sessions share a credential: the SHA-256 of an access token's secret, or of an identity.
        let tokenKey: String
        let principal: String
        let readOnly: Bool
        /// What every form of this session carries.
        let csrf: String
        let created: ContinuousClock.Instant
        var lastSeen: ContinuousClock.Instant
        /// A message for the next page (the answer of the last change), shown once.
        var flash: Flash?
    }

    /// How a person signed in.
    enum Credential: Sendable {
        /// With an access token: its secret, to look it up at each request (never logged, never written), and its name.
        case accessToken(secret: String, name: String)
        /// With the identity provider: the account, which must still sign in as the session's principal, and when the
        /// person last authenticated there (`auth_time`).
        case identity(issuer: String, subject: String, authTime: Date?)

        /// What makes sessions share it.
        var key: String {
            switch self {
            case .accessToken(let secret, _): ConsoleSessions.key(secret)
            case .identity(let issuer, let subject, _): ConsoleSessions.key("oidc\n\(issuer)\n\(subject)")
            }
        }
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
    /// The most sessions kept at once, of everyone together (``defaultLimit`` unless a test says otherwise).
    let limit: Int
    static let defaultLimit = 10_000
    /// The most sessions of one access token, and of one principal (from all of their tokens).
    static let perToken = 8
    static let perPrincipal = 32
    /// The most sign-ins in ``signInWindow`` with one access token, and as one principal.
    static let signInsPerToken = 10
    static let signInsPerPrincipal = 30
    static let signInWindow = Duration.seconds(60)

    private let sessions = Mutex<[String: Session]>([:])
    private let clock = ContinuousClock()
    /// Sign-ins counted per token and per principal (each table bounded as failed authentications are).
    private let signInsByToken = FailedAuthentications(limit: signInsPerToken, globalLimit: nil, window: signInWindow)
    private let signInsByPrincipal = FailedAuthentications(limit: signInsPerPrincipal, globalLimit: nil, window: signInWindow)
    /// The secret the sign-in form's CSRF token is made with (``signInToken(for:)``): random for each run, never sent.
    private let signInKey = SymmetricKey(size: .bits256)

    init(limit: Int = defaultLimit) {
        self.limit = limit
    }

    /// Why a sign-in opens no session.
    enum Refusal: Error, Equatable {
        /// Too many sign-ins with the token, or as its principal, in ``ConsoleSessions/signInWindow``: wait that many
        /// seconds.
        case tooManySignIns(token: Bool, seconds: Int)
        /// The table is full of live sessions.
        case full
    }

    /// Opens a session for an accepted access token; answers the cookie's value (the session id), or why not.
    func open(secret: String, tokenName: String, principal: String, readOnly: Bool) -> Result<(id: String, session: Session), Refusal> {
        open(.accessToken(secret: secret, name: tokenName), principal: principal, readOnly: readOnly)
    }

    /// Opens a session for a person signed in with `credential`; answers the cookie's value (the session id), or why not.
    func open(_ credential: Credential, principal: String, readOnly: Bool) -> Result<(id: String, session: Session), Refusal> {
        let tokenKey = credential.key
        if let wait = signInsByToken.fail(tokenKey) { return .failure(.tooManySignIns(token: true, seconds: wait)) }
        if let wait = signInsByPrincipal.fail(principal) { return .failure(.tooManySignIns(token: false, seconds: wait)) }
        let id = Self.random()
        let now = clock.now
        let session = Session(
            credential: credential, tokenKey: tokenKey, principal: principal, readOnly: readOnly, csrf: Self.random(),
            created: now, lastSeen: now, flash: nil)
        let opened = sessions.withLock { sessions -> Bool in
            let expired = sessions.filter { !Self.alive($0.value, at: now) }.map(\.key)
            for key in expired { sessions[key] = nil }
            // The person's own least recently used session makes room, never anyone else's.
            if let oldest = Self.leastRecentlyUsed(in: sessions, atLeast: Self.perToken, where: { $0.tokenKey == tokenKey })
                ?? Self.leastRecentlyUsed(in: sessions, atLeast: Self.perPrincipal, where: { $0.principal == principal })
            {
                sessions[oldest] = nil
            }
            guard sessions.count < limit else { return false }
            sessions[Self.key(id)] = session
            return true
        }
        return opened ? .success((id, session)) : .failure(.full)
    }

    /// How many sessions are open (expired ones included until the next sign-in sweeps them).
    var count: Int { sessions.withLock { $0.count } }

    /// The sign-in form's CSRF token for the pre-session `preSession` (the random value of the sign-in path's cookie):
    /// an HMAC of it with this server's secret, so that only a page this server rendered carries a token that matches
    /// a cookie.
    func signInToken(for preSession: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(("console sign-in\n" + preSession).utf8), using: signInKey)
        return Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
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

    /// The key of the least recently used of the sessions that `belong`, when there are at least `count` of them.
    private static func leastRecentlyUsed(
        in sessions: [String: Session], atLeast count: Int, where belong: (Session) -> Bool
    ) -> String? {
        let matching = sessions.filter { belong($0.value) }
        guard matching.count >= count else { return nil }
        return matching.min { $0.value.lastSeen < $1.value.lastSeen }?.key
    }

    private static func alive(_ session: Session, at now: ContinuousClock.Instant) -> Bool {
        now - session.created < lifetime && now - session.lastSeen < idle
    }

    /// 32 random bytes, base64url without padding (43 characters), as token secrets are made.
    static func random() -> String { APITokenSecret.randomPart() }

    fileprivate static func key(_ id: String) -> String { SHA256.hex(Data(id.utf8)) }
}
