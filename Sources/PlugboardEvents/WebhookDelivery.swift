package import Foundation
package import PlugboardBoardSecureStorage
import PlugboardIdentity
package import PlugboardModel
import PlugboardNetwork
package import PlugboardStore
import Synchronization

/// Delivery of the audit log's rows to the board's webhook endpoints.
///
/// Each endpoint has a cursor, the last seq it acknowledged; the rows after it that its filters take are sent one at a
/// time, in seq order, at least once: the cursor moves only after a 2xx answer, so a process that dies between sending
/// and recording sends the row again (receivers deduplicate by `webhook-id`). Kill switches and aborted rollouts among
/// the waiting rows go first. Every endpoint is sent to by a task of its own, so one that hangs costs its own attempt
/// (at most ``WebhookSettings/attemptTimeout``), never another endpoint's time, and never the board's writer: the
/// board is read and written in short transactions between attempts.
package final class WebhookDelivery: Sendable {
    package let board: Board
    let secrets: BoardSecureStorage
    package let settings: WebhookSettings
    let principal: Principal
    /// Rows sent ahead of their turn (kill switches, aborts) and not yet behind the cursor, by endpoint.
    let sentAhead = Mutex<[String: Set<Int64>]>([:])

    /// Delivery for `board`, whose secrets `secrets` opens; an endpoint that answers 410 Gone is disabled by
    /// `plugboard/webhook-delivery` via `via`.
    package init(board: Board, secrets: BoardSecureStorage, settings: WebhookSettings, via: String) throws(BoardError) {
        self.board = board
        self.secrets = secrets
        self.settings = settings
        principal = try Principal(osUser: Board.webhookDeliveryPrincipal, via: via)
    }

    /// What one endpoint's pass ended with.
    package enum Outcome: Sendable, Equatable {
        /// Nothing waits.
        case caughtUp
        /// An attempt failed, or one is not due yet: the next is due then.
        case retry(at: Date)
        /// The endpoint is disabled or gone.
        case stopped
    }

    /// One pass over every enabled endpoint, each on a task of its own: each is sent what waits for it until it is
    /// caught up, or an attempt fails, or (unless `force`) its next attempt is not due.
    package func deliverOnce(force: Bool = false) async throws(BoardError) -> WebhookDeliveryReport {
        let names = try board.webhooks().filter(\.enabled).map(\.name)
        let results = await withTaskGroup(of: (String, Int, Int, String).self) { group in
            for name in names {
                group.addTask {
                    let pass = await self.pass(name, force: force)
                    return (name, pass.delivered, pass.failed, pass.line)
                }
            }
            var all: [(String, Int, Int, String)] = []
            for await result in group { all.append(result) }
            return all.sorted { $0.0 < $1.0 }
        }
        return WebhookDeliveryReport(
            delivered: results.reduce(0) { $0 + $1.1 }, failed: results.reduce(0) { $0 + $1.2 }, endpoints: results.map(\.3))
    }

    /// Sends to every enabled endpoint until the task is cancelled: a task per endpoint, started when the endpoint
    /// appears or is enabled, ended when it is removed or disabled. Looks for new rows every `poll`.
    package func run(poll: Duration = .milliseconds(250)) async {
        var running: [String: Task<Void, Never>] = [:]
        while !Task.isCancelled {
            let enabled = Set(((try? board.webhooks()) ?? []).filter(\.enabled).map(\.name))
            for (name, task) in running where !enabled.contains(name) {
                task.cancel()
                running[name] = nil
            }
            for name in enabled where running[name] == nil {
                running[name] = Task { await self.follow(name, poll: poll) }
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        for task in running.values { task.cancel() }
    }

    /// One endpoint's loop in `run(poll:)`.
    private func follow(_ name: String, poll: Duration) async {
        while !Task.isCancelled {
            let pass = await self.pass(name, force: false)
            switch pass.outcome {
            case .stopped: return
            case .caughtUp: try? await Task.sleep(for: poll)
            case .retry(let at):
                let wait = max(at.timeIntervalSinceNow, 0)
                // Woken at least once a second, so that a replay, an enable or a removal is seen.
                try? await Task.sleep(for: .milliseconds(Int64(min(wait, 1) * 1000)))
            }
        }
    }

    /// What ``pass(_:force:)`` did.
    package struct Pass: Sendable {
        package var outcome: Outcome
        package var delivered = 0
        package var failed = 0
        package var line: String
    }

    /// Sends `name` what waits for it (see ``deliverOnce(force:)``).
    package func pass(_ name: String, force: Bool) async -> Pass {
        let endpoint: WebhookEndpoint
        let secret: Data
        let signingKey: Data?
        let boardID: String
        do {
            endpoint = try board.webhook(name)
            guard endpoint.enabled else { return Pass(outcome: .stopped, line: "\(name): disabled") }
            if !force, let next = endpoint.nextAttemptAt.flatMap(Milliseconds.parse), next > board.clock.date() {
                return Pass(outcome: .retry(at: next), line: "\(name): next attempt at \(endpoint.nextAttemptAt ?? "")")
            }
            secret = try secrets.webhookSecret(name: name)
            signingKey = try secrets.webhookSigningPrivateKey()
            boardID = try board.info("board_id") ?? "board"
        } catch {
            return Pass(outcome: .stopped, line: "\(name): \(error.message)")
        }
        let payload = WebhookPayload(boardID: boardID, consoleURL: settings.consoleURL)
        var pass = Pass(outcome: .caughtUp, line: "")
        var cursor = endpoint.cursor
        var attempts = endpoint.attempts
        // The status the cursor's last move records: the last 2xx answer.
        var lastStatus = endpoint.lastStatus.flatMap { (200..<300).contains($0) ? $0 : nil } ?? 200
        while !Task.isCancelled {
            guard let rows = try? board.auditRows(after: cursor, limit: settings.batch), let last = rows.last else { break }
            let ahead = sentAhead.withLock { $0[name] ?? [] }
            let wanted = rows.filter { Self.receives(endpoint, $0) && !ahead.contains($0.seq) }
            let order = wanted.filter(WebhookFormats.isStop) + wanted.filter { !WebhookFormats.isStop($0) }
            var done = Set<Int64>()
            for row in order {
                // Whether every row before it is sent: then the cursor moves to it.
                let first = !wanted.contains { $0.seq < row.seq && !done.contains($0.seq) }
                let sent = await send(row, to: endpoint, payload: payload, secret: secret, signingKey: signingKey)
                switch sent {
                case .success(let status):
                    pass.delivered += 1
                    attempts = 0
                    lastStatus = status
                    done.insert(row.seq)
                    if first {
                        guard (try? board.recordWebhookDelivered(name, from: cursor, through: row.seq, status: status)) == true else {
                            pass.line = "\(name): its cursor moved (a replay or an enable); starting again from it"
                            return pass
                        }
                        cursor = row.seq
                        forgetSent(name, through: row.seq)
                    } else {
                        _ = sentAhead.withLock { $0[name, default: []].insert(row.seq) }
                    }
                case .failure(let failure):
                    pass.failed += 1
                    attempts += 1
                    if failure.status == 410 {
                        _ = try? board.setWebhookEnabled(
                            name, false, reason: "the endpoint answered 410 Gone at seq \(row.seq)", by: principal)
                        pass.outcome = .stopped
                        pass.line = "\(name): answered 410 Gone; disabled"
                        return pass
                    }
                    let now = board.clock.date()
                    let wait = settings.wait(afterAttempts: attempts, retryAfter: failure.retryAfter, now: now)
                    let next = now.addingTimeInterval(WebhookSettings.seconds(wait))
                    try? board.recordWebhookFailed(name, status: failure.status, error: failure.message, nextAttempt: next)
                    pass.outcome = .retry(at: next)
                    pass.line = "\(name): seq \(row.seq) failed (\(failure.message)); next attempt at \(Timestamp.format(next))"
                    return pass
                }
            }
            // Every row of the batch is sent or not for this endpoint: the cursor moves past them all.
            if last.seq > cursor {
                guard (try? board.recordWebhookDelivered(name, from: cursor, through: last.seq, status: lastStatus)) == true
                else {
                    pass.line = "\(name): its cursor moved (a replay or an enable); starting again from it"
                    return pass
                }
                cursor = last.seq
                forgetSent(name, through: last.seq)
            }
            if rows.count < settings.batch { break }
        }
        pass.line = "\(name): \(pass.delivered) delivered, caught up at seq \(cursor)"
        return pass
    }

    private func forgetSent(_ name: String, through seq: Int64) {
        sentAhead.withLock { $0[name] = $0[name]?.filter { $0 > seq } }
    }

    /// Whether `endpoint` is sent `row`: its filters take it; a test event goes to its own endpoint only.
    static func receives(_ endpoint: WebhookEndpoint, _ row: AuditRecord) -> Bool {
        if row.action == AuditAction.webhookTest.name { return row.targetID == endpoint.name }
        return endpoint.receives(action: row.action, environment: row.environment)
    }

    /// A failed attempt: its status (nil when no answer came), `Retry-After`, and one sentence.
    struct Failure: Error {
        var status: Int?
        var retryAfter: String?
        var message: String
    }

    /// One attempt: the signed POST of `row`.
    func send(_ row: AuditRecord, to endpoint: WebhookEndpoint, payload: WebhookPayload, secret: Data, signingKey: Data?) async
        -> Result<Int, Failure>
    {
        guard let url = URL(string: endpoint.url) else { return .failure(Failure(message: "the URL does not parse")) }
        let body = payload.body(row, format: endpoint.format)
        let timestamp = Int(board.clock.date().timeIntervalSince1970)
        let headers = WebhookSigning.headers(id: payload.id(row), timestamp: timestamp, body: body, secret: secret, signingKey: signingKey)
        var http = OutboundHTTP(
            connectTimeout: min(.seconds(3), settings.attemptTimeout), requestTimeout: settings.attemptTimeout, bodyLimit: 64 << 10,
            allowPrivateNetwork: settings.allowPrivate, allowLoopback: settings.allowPrivate)
        http.allowPlainHTTP = true
        http.party = "the webhook \(endpoint.name)"
        do {
            let answer = try await http.post(url, what: "URL", body: body, headers: headers)
            if (200..<300).contains(answer.status) { return .success(answer.status) }
            let redirect = (300..<400).contains(answer.status) ? ", a redirect, which Plugboard does not follow" : ""
            return .failure(Failure(status: answer.status, retryAfter: answer.retryAfter, message: "answered \(answer.status)\(redirect)"))
        } catch {
            return .failure(Failure(status: nil, message: error.description))
        }
    }
}
