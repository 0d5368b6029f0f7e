import Crypto
public import Foundation
import Synchronization

/// Sign-ins begun and not yet finished, in memory: each is found by its `state`, finished once, within 10 minutes,
/// and only by the browser that began it.
///
/// Only the SHA-256 of a state and of a browser binding is kept. At most ``capacity`` logins are pending; beginning
/// one more drops the oldest. A restart forgets them all: the person starts the sign-in again.
public final class PendingLogins: Sendable {
    /// What ``begin(purpose:returnTo:)`` hands out: the values for the authorization URL and the browser's cookie.
    public struct Started: Sendable {
        /// The `state` parameter (256 random bits, base64url).
        public var state: String
        /// The `nonce` parameter, which the ID token must carry back.
        public var nonce: String
        /// The PKCE verifier, kept here and sent only to the token endpoint.
        public var verifier: String
        /// The S256 challenge of ``verifier``, for the authorization URL.
        public var challenge: String
        /// The value to bind the login to the browser (a cookie), given back to ``PendingLogins/finish(state:browserBinding:)``.
        public var browserBinding: String
    }

    /// A login found and consumed by ``PendingLogins/finish(state:browserBinding:)``: what the code exchange needs.
    public struct Pending: Sendable {
        /// What the login is for, as given to ``PendingLogins/begin(purpose:returnTo:)`` (a console sign-in, a step-up…).
        public var purpose: String
        /// Where to go after the sign-in, as given.
        public var returnTo: String
        /// The nonce the ID token must carry.
        public var nonce: String
        /// The PKCE verifier for the token request.
        public var verifier: String
        /// When the login began.
        public var began: Date
    }

    private struct Entry: Sendable {
        var pending: Pending
        var bindingHash: SHA256Digest
    }

    /// How long a login may stay pending.
    public let lifetime: TimeInterval
    /// How many logins may be pending at once.
    public let capacity: Int
    private let entries = Mutex<[SHA256Digest: Entry]>([:])
    private let now: @Sendable () -> Date

    /// An empty set of pending logins: 10 minutes to finish, at most 1,000 at once.
    public convenience init(lifetime: TimeInterval = 600, capacity: Int = 1_000) {
        self.init(lifetime: lifetime, capacity: capacity, now: { Date() })
    }

    init(lifetime: TimeInterval, capacity: Int, now: @escaping @Sendable () -> Date) {
        self.lifetime = lifetime
        self.capacity = max(1, capacity)
        self.now = now
    }

    /// The number of logins pending (expired ones included until the next ``begin(purpose:returnTo:)``).
    public var count: Int { entries.withLock { $0.count } }

    /// Begins a login: fresh random state, nonce, PKCE verifier and browser binding, kept until finished or expired.
    public func begin(purpose: String, returnTo: String) -> Started {
        let started = Started(
            state: Base64URL.random(), nonce: Base64URL.random(), verifier: Base64URL.random(), challenge: "",
            browserBinding: Base64URL.random())
        var result = started
        result.challenge = codeChallenge(of: started.verifier)
        let instant = now()
        let entry = Entry(
            pending: Pending(purpose: purpose, returnTo: returnTo, nonce: started.nonce, verifier: started.verifier, began: instant),
            bindingHash: SHA256.hash(data: Data(started.browserBinding.utf8)))
        entries.withLock { entries in
            entries = entries.filter { instant.timeIntervalSince($0.value.pending.began) < lifetime }
            while entries.count >= capacity, let oldest = entries.min(by: { $0.value.pending.began < $1.value.pending.began }) {
                entries[oldest.key] = nil
            }
            entries[SHA256.hash(data: Data(started.state.utf8))] = entry
        }
        return result
    }

    /// Finishes the login of `state`: removes it (whatever follows, it cannot be finished twice), then checks that it
    /// has not expired and that `browserBinding` is the one handed out with it.
    ///
    /// - Throws: ``IdentityError`` (``IdentityError/Code/loginRejected``) when the state is unknown, already used,
    ///   expired, or the binding is not this browser's.
    public func finish(state: String, browserBinding: String) throws(IdentityError) -> Pending {
        let key = SHA256.hash(data: Data(state.utf8))
        guard let entry = entries.withLock({ $0.removeValue(forKey: key) }) else {
            throw IdentityError(.loginRejected, "this sign-in is unknown or was finished already; start the sign-in again")
        }
        guard now().timeIntervalSince(entry.pending.began) < lifetime else {
            throw IdentityError(.loginRejected, "this sign-in took longer than \(Int(lifetime / 60)) minutes; start the sign-in again")
        }
        let presented = SHA256.hash(data: Data(browserBinding.utf8))
        var difference: UInt8 = 0
        for (a, b) in zip(entry.bindingHash, presented) { difference |= a ^ b }
        guard difference == 0 else {
            throw IdentityError(.loginRejected, "this sign-in was started in another browser; start the sign-in again")
        }
        return entry.pending
    }
}
