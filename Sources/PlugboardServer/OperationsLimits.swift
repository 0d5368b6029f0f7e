import Crypto
import Foundation
import PlugboardModel
import Synchronization

/// Failed authentications in a sliding window, per client address and from all addresses together. Only failures are
/// limited: a request whose token the board accepts is never refused for what was sent before it, from its address or
/// any other. Past `limit` failures from one address in `window`, or `globalLimit` from all of them, a failing request
/// is answered `429` with `Retry-After` instead of `401`. The table holds at most ``capacity`` addresses (the oldest
/// entries go first), so a flood of addresses cannot grow it. The console also counts sign-ins with it, per token and
/// per principal, without a limit for all together (`globalLimit` nil).
final class FailedAuthentications: Sendable {
    let limit: Int
    let globalLimit: Int?
    let window: Duration
    static let capacity = 10_000
    private struct State {
        var byAddress: [String: [ContinuousClock.Instant]] = [:]
        var all: [ContinuousClock.Instant] = []
    }
    private let state = Mutex(State())

    init(limit: Int, globalLimit: Int?, window: Duration) {
        self.limit = max(1, limit)
        self.globalLimit = globalLimit.map { max(1, $0) }
        self.window = window
    }

    /// Counts a failed authentication from `address`; returns the seconds the failures must stop for when `address`,
    /// or all addresses together, are past their limit (the failure is answered `429`), else nil (`401`).
    func fail(_ address: String) -> Int? {
        let now = ContinuousClock.now
        return state.withLock { state -> Int? in
            if state.byAddress[address] == nil, state.byAddress.count >= Self.capacity {
                // Forget the address whose last failure is oldest.
                if let stale = state.byAddress.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) })?.key {
                    state.byAddress[stale] = nil
                }
            }
            var times = state.byAddress[address, default: []]
            let local = Self.add(now, to: &times, keeping: limit + 1, window: window)
            state.byAddress[address] = times
            let global = globalLimit.map { (Self.add(now, to: &state.all, keeping: $0 + 1, window: window), $0) }
            let overall = global.map { $0.0.count > $0.1 } ?? false
            guard local.count > limit || overall else { return nil }
            let oldest = local.count > limit ? local.oldest : global?.0.oldest ?? now
            let remaining = window - (now - oldest)
            return max(1, Int(remaining.components.seconds) + (remaining.components.attoseconds > 0 ? 1 : 0))
        }
    }

    /// Appends `now` to `times`, drops what left the window and keeps at most `keeping`; returns the count and the oldest.
    private static func add(
        _ now: ContinuousClock.Instant, to times: inout [ContinuousClock.Instant], keeping: Int, window: Duration
    ) -> (count: Int, oldest: ContinuousClock.Instant) {
        let expired = times.firstIndex { now - $0 < window } ?? times.count
        times.removeFirst(expired)
        times.append(now)
        if times.count > keeping { times.removeFirst(times.count - keeping) }
        return (times.count, times.first ?? now)
    }
}

/// Request bodies larger than the server's usual limit (a registration of many manifests), while they are read and
/// decoded: at most ``perPrincipal`` of them per principal (from all of their access tokens together) and at most
/// ``budget`` bytes (their declared lengths, or the route's limit when a length is not declared) for all principals
/// together. Past either, the request is refused before its body is read. Kill switches and the other stops never carry
/// such a body, and never wait here.
final class BodyAdmission: Sendable {
    let perPrincipal: Int
    let budget: Int
    private struct State {
        var byPrincipal: [String: Int] = [:]
        var bytes = 0
    }
    private let state = Mutex(State())

    /// Why a body is not admitted now.
    enum Refusal: Error, Equatable {
        /// The principal already has ``BodyAdmission/perPrincipal`` large bodies in flight.
        case principal
        /// Bodies in flight would pass ``BodyAdmission/budget``.
        case server
    }

    /// A body admitted; give its place back with ``leave()`` once it is decoded and done with.
    struct Ticket: Sendable {
        let admission: BodyAdmission
        let principal: String
        let bytes: Int
        func leave() { admission.leave(principal, bytes) }
    }

    init(perPrincipal: Int, budget: Int) {
        self.perPrincipal = max(1, perPrincipal)
        self.budget = max(1, budget)
    }

    /// Admits a body of `bytes` sent by `principal` (with any of their tokens), or says why not.
    func admit(principal: String, bytes: Int) -> Result<Ticket, Refusal> {
        state.withLock { state in
            if state.byPrincipal[principal, default: 0] >= perPrincipal { return .failure(.principal) }
            if state.bytes + bytes > budget { return .failure(.server) }
            state.byPrincipal[principal, default: 0] += 1
            state.bytes += bytes
            return .success(Ticket(admission: self, principal: principal, bytes: bytes))
        }
    }

    private func leave(_ principal: String, _ bytes: Int) {
        state.withLock { state in
            let count = state.byPrincipal[principal, default: 1] - 1
            state.byPrincipal[principal] = count > 0 ? count : nil
            state.bytes -= bytes
        }
    }
}

/// The digests of access tokens the board accepted since the server started and has not refused since, at most
/// ``capacity`` of them (the set starts again when full). Authentication looks these up in the lane of the request's own work, and every other
/// token (a guess, or a token's first request) in a lane of its own: a flood of unknown tokens queues only in front of
/// other unknown tokens, never in front of a kill switch sent with a token already seen.
final class RecognizedTokens: Sendable {
    static let capacity = 10_000
    private let digests = Mutex<Set<String>>([])

    /// Whether a token with this secret was accepted before.
    func contains(secret: String) -> Bool {
        let digest = Self.digest(secret)
        return digests.withLock { $0.contains(digest) }
    }

    /// Notes whether the board accepted a token with this secret: a revoked or expired token is forgotten, so that it
    /// is looked up with the guesses again.
    func note(secret: String, accepted: Bool) {
        let digest = Self.digest(secret)
        digests.withLock { digests in
            guard accepted else {
                digests.remove(digest)
                return
            }
            if digests.count >= Self.capacity { digests.removeAll() }
            digests.insert(digest)
        }
    }

    private static func digest(_ secret: String) -> String { SHA256.hex(Data(secret.utf8)) }
}
