import Foundation
import Synchronization

/// Failed authentications in a sliding window, per client address and from all addresses together. Only failures are
/// limited: a request whose token the board accepts is never refused for what was sent before it, from its address or
/// any other. Past `limit` failures from one address in `window`, or `globalLimit` from all of them, a failing request
/// is answered `429` with `Retry-After` instead of `401`. The table holds at most ``capacity`` addresses (the oldest
/// entries go first), so a flood of addresses cannot grow it.
final class FailedAuthentications: Sendable {
    let limit: Int
    let globalLimit: Int
    let window: Duration
    static let capacity = 10_000
    private struct State {
        var byAddress: [String: [ContinuousClock.Instant]] = [:]
        var all: [ContinuousClock.Instant] = []
    }
    private let state = Mutex(State())

    init(limit: Int, globalLimit: Int, window: Duration) {
        self.limit = max(1, limit)
        self.globalLimit = max(1, globalLimit)
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
            let global = Self.add(now, to: &state.all, keeping: globalLimit + 1, window: window)
            guard local.count > limit || global.count > globalLimit else { return nil }
            let oldest = local.count > limit ? local.oldest : global.oldest
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
/// decoded: at most ``perToken`` of them per access token and at most ``budget`` bytes (their declared lengths, or the
/// route's limit when a length is not declared) for all tokens together. Past either, the request is refused before its
/// body is read. Kill switches and the other stops never carry such a body, and never wait here.
final class BodyAdmission: Sendable {
    let perToken: Int
    let budget: Int
    private struct State {
        var byToken: [String: Int] = [:]
        var bytes = 0
    }
    private let state = Mutex(State())

    /// Why a body is not admitted now.
    enum Refusal: Error, Equatable {
        /// The token already has ``BodyAdmission/perToken`` large bodies in flight.
        case token
        /// Bodies in flight would pass ``BodyAdmission/budget``.
        case server
    }

    /// A body admitted; give its place back with ``leave()`` once it is decoded and done with.
    struct Ticket: Sendable {
        let admission: BodyAdmission
        let token: String
        let bytes: Int
        func leave() { admission.leave(token, bytes) }
    }

    init(perToken: Int, budget: Int) {
        self.perToken = max(1, perToken)
        self.budget = max(1, budget)
    }

    /// Admits a body of `bytes` sent with the token `token` (its principal and name), or says why not.
    func admit(token: String, bytes: Int) -> Result<Ticket, Refusal> {
        state.withLock { state in
            if state.byToken[token, default: 0] >= perToken { return .failure(.token) }
            if state.bytes + bytes > budget { return .failure(.server) }
            state.byToken[token, default: 0] += 1
            state.bytes += bytes
            return .success(Ticket(admission: self, token: token, bytes: bytes))
        }
    }

    private func leave(_ token: String, _ bytes: Int) {
        state.withLock { state in
            let count = state.byToken[token, default: 1] - 1
            state.byToken[token] = count > 0 ? count : nil
            state.bytes -= bytes
        }
    }
}
