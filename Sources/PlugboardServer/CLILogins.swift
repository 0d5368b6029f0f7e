import Crypto
import Foundation
import PlugboardModel
import PlugboardStore
import Synchronization

/// The sign-ins of `plugboard login URL` begun and not yet finished, in memory: loopback logins (RFC 8252 style) and
/// device codes (RFC 8628 style). Each is used once, within ``lifetime``; at most ``capacity`` of each kind are pending
/// at once (beginning one more is refused until some finish or expire). A restart forgets them all: the person runs
/// `plugboard login` again.
///
/// Only SHA-256 digests of the login's identifier, the one-time code, the device code and the user code are kept as
/// keys, so a lookup's timing says nothing about the secrets; the PKCE verifier is checked against its challenge in
/// constant time.
final class CLILogins: Sendable {
    /// How long a login may stay pending.
    static let lifetime: TimeInterval = 600
    /// How many logins of each kind may be pending at once.
    static let capacity = 1_000
    /// How long the access token of a login lasts unless the CLI asks for less or more.
    static let defaultTokenLifetime: TimeInterval = 12 * 3600
    /// The longest access token a login gives.
    static let longestTokenLifetime: TimeInterval = 7 * 24 * 3600
    /// The seconds a device's CLI waits between two polls, unless told to slow down.
    static let pollInterval = 5
    /// The letters of user codes: no vowels (no words), none that look alike.
    static let userCodeLetters = Array("BCDFGHJKLMNPQRSTVWXZ")

    /// Who a finished login gives a token to: the person, as they signed in.
    struct Grant: Sendable {
        /// The person, with how they signed in (`via`), as the token's creation is recorded.
        var actor: Principal
        /// Whether the token may only read (the person's session may only read).
        var readOnly: Bool
    }

    /// A loopback login: where the browser goes back to, the CLI's PKCE challenge, and once the person signed in at the
    /// provider, what it grants.
    struct Loopback: Sendable {
        var redirect: String
        var challenge: String
        var tokenLifetime: TimeInterval
        var began: Date
        var grant: Grant?
    }

    /// A device login: its user code, who asked, and the person's answer once given.
    struct Device: Sendable {
        enum Answer: Sendable {
            case approved(Grant)
            case denied
        }
        var userCode: String
        var tokenLifetime: TimeInterval
        var began: Date
        var address: String
        var interval: Int
        var lastPoll: Date?
        var answer: Answer?
        var deviceKey: String
    }

    /// What a poll of a device code found.
    enum Poll: Sendable {
        case granted(Grant, tokenLifetime: TimeInterval)
        /// An RFC 8628 error: `authorization_pending`, `slow_down`, `expired_token`, `access_denied`, `invalid_grant`.
        case waiting(error: String, sentence: String)
    }

    private struct State {
        var loopback: [String: Loopback] = [:]
        var codes: [String: Loopback] = [:]
        var devices: [String: Device] = [:]
        var userCodes: [String: String] = [:]
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    static func key(_ secret: String) -> String { SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined() }

    /// The S256 challenge of a PKCE verifier: base64url of its SHA-256, without padding.
    static func challenge(of verifier: String) -> String {
        Data(SHA256.hash(data: Data(verifier.utf8))).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private func expired(_ began: Date, at instant: Date) -> Bool { instant.timeIntervalSince(began) >= Self.lifetime }

    private func prune(_ state: inout State, at instant: Date) {
        state.loopback = state.loopback.filter { !expired($0.value.began, at: instant) }
        state.codes = state.codes.filter { !expired($0.value.began, at: instant) }
        for (key, device) in state.devices where expired(device.began, at: instant) {
            state.devices[key] = nil
            state.userCodes[Self.key(device.userCode)] = nil
        }
    }

    // MARK: Loopback

    /// Begins a loopback login; returns its identifier (for the console's URL that starts it), or nil when full.
    func beginLoopback(redirect: String, challenge: String, tokenLifetime: TimeInterval) -> String? {
        let id = APITokenSecret.randomPart()
        let instant = now()
        return state.withLock { state -> String? in
            prune(&state, at: instant)
            guard state.loopback.count + state.codes.count < Self.capacity else { return nil }
            state.loopback[Self.key(id)] = Loopback(
                redirect: redirect, challenge: challenge, tokenLifetime: tokenLifetime, began: instant, grant: nil)
            return id
        }
    }

    /// Whether the loopback login `id` is pending (its browser may start the provider's sign-in).
    func isPending(_ id: String) -> Bool {
        let instant = now()
        return state.withLock { state in state.loopback[Self.key(id)].map { !expired($0.began, at: instant) } ?? false }
    }

    /// The person signed in for loopback login `id`: the login leaves the pending ones and a one-time code is made for
    /// it. Returns the browser's next address (the loopback redirect with `code`), or nil when the login is gone.
    func signedIn(_ id: String, grant: Grant) -> String? {
        let code = APITokenSecret.randomPart()
        let instant = now()
        return state.withLock { state -> String? in
            guard var login = state.loopback.removeValue(forKey: Self.key(id)), !expired(login.began, at: instant) else { return nil }
            login.grant = grant
            state.codes[Self.key(code)] = login
            return login.redirect + (login.redirect.contains("?") ? "&" : "?") + "code=" + code
        }
    }

    /// Finishes a loopback login: the code is removed (it cannot be used twice, whatever follows), then it must not have
    /// expired and `verifier` must be the one whose challenge began the login.
    func finish(code: String, verifier: String) -> Result<(Grant, TimeInterval), BoardError> {
        let instant = now()
        let login = state.withLock { $0.codes.removeValue(forKey: Self.key(code)) }
        guard let login, let grant = login.grant else {
            return .failure(BoardError(.notAllowed, "this login code is unknown or was used already; run plugboard login again"))
        }
        guard !expired(login.began, at: instant) else {
            return .failure(BoardError(.notAllowed, "this login took longer than 10 minutes; run plugboard login again"))
        }
        guard APITokenSecret.constantTimeEquals(Array(Self.challenge(of: verifier).utf8), Array(login.challenge.utf8)) else {
            return .failure(
                BoardError(.notAllowed, "the code verifier does not match the login's code challenge; run plugboard login again"))
        }
        return .success((grant, login.tokenLifetime))
    }

    // MARK: Device

    /// Begins a device login: its device code (for the CLI's polls) and user code (for the person), or nil when full.
    func beginDevice(address: String, tokenLifetime: TimeInterval) -> (deviceCode: String, userCode: String)? {
        let deviceCode = APITokenSecret.randomPart()
        let instant = now()
        return state.withLock { state -> (String, String)? in
            prune(&state, at: instant)
            guard state.devices.count < Self.capacity else { return nil }
            var userCode = Self.randomUserCode()
            while state.userCodes[Self.key(userCode)] != nil { userCode = Self.randomUserCode() }
            let key = Self.key(deviceCode)
            state.devices[key] = Device(
                userCode: userCode, tokenLifetime: tokenLifetime, began: instant, address: address, interval: Self.pollInterval,
                lastPoll: nil, answer: nil, deviceKey: key)
            state.userCodes[Self.key(userCode)] = key
            return (deviceCode, userCode)
        }
    }

    static func randomUserCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<8).map { _ in userCodeLetters.randomElement(using: &generator)! })
    }

    /// A user code as the person may type it (`bcdf-ghjk`, `BCDF GHJK`) in its stored form (`BCDFGHJK`); nil when it
    /// cannot be one.
    static func normalizedUserCode(_ text: String) -> String? {
        let letters = text.uppercased().filter { $0 != "-" && $0 != " " }
        guard letters.count == 8, letters.allSatisfy({ userCodeLetters.contains($0) }) else { return nil }
        return letters
    }

    /// `XXXX-XXXX`.
    static func displayed(_ userCode: String) -> String { String(userCode.prefix(4)) + "-" + String(userCode.dropFirst(4)) }

    /// The pending, unanswered device login of `userCode`, if any.
    func device(userCode: String) -> Device? {
        guard let code = Self.normalizedUserCode(userCode) else { return nil }
        let instant = now()
        return state.withLock { state -> Device? in
            guard let key = state.userCodes[Self.key(code)], let device = state.devices[key], device.answer == nil,
                !expired(device.began, at: instant)
            else { return nil }
            return device
        }
    }

    /// Answers the device login of `userCode` (once); false when there is no pending, unanswered one.
    func answer(userCode: String, with answer: Device.Answer) -> Bool {
        guard let code = Self.normalizedUserCode(userCode) else { return false }
        let instant = now()
        return state.withLock { state -> Bool in
            guard let key = state.userCodes.removeValue(forKey: Self.key(code)), var device = state.devices[key], device.answer == nil,
                !expired(device.began, at: instant)
            else { return false }
            device.answer = answer
            state.devices[key] = device
            return true
        }
    }

    /// A poll of `deviceCode` by the CLI: the grant once approved (the device code is then gone), else why not yet.
    func poll(deviceCode: String) -> Poll {
        let instant = now()
        let key = Self.key(deviceCode)
        return state.withLock { state -> Poll in
            guard var device = state.devices[key] else {
                return .waiting(
                    error: "invalid_grant", sentence: "this device code is unknown or was used already; run plugboard login again")
            }
            if expired(device.began, at: instant) {
                state.devices[key] = nil
                state.userCodes[Self.key(device.userCode)] = nil
                return .waiting(error: "expired_token", sentence: "the code was not approved within 10 minutes; run plugboard login again")
            }
            switch device.answer {
            case .approved(let grant):
                state.devices[key] = nil
                return .granted(grant, tokenLifetime: device.tokenLifetime)
            case .denied:
                state.devices[key] = nil
                return .waiting(error: "access_denied", sentence: "the login was denied in the console")
            case nil:
                defer { state.devices[key] = device }
                // Half a second of slack: the CLI waits the interval after each answer, and clocks and networks jitter.
                if let last = device.lastPoll, instant.timeIntervalSince(last) < Double(device.interval) - 0.5 {
                    device.interval += 5
                    device.lastPoll = instant
                    return .waiting(error: "slow_down", sentence: "poll at most every \(device.interval) seconds")
                }
                device.lastPoll = instant
                return .waiting(error: "authorization_pending", sentence: "the code is not approved yet")
            }
        }
    }
}
