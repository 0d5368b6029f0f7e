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
    /// Rung when the board changes: every endpoint's task looks for new rows.
    let wakeup = Wakeup()
    /// Bodies and `v1a` signatures, made once for every endpoint of a format.
    let prepared = PreparedEvents()
    /// Each endpoint's connections, kept open between its deliveries.
    let connections = Mutex<[String: OutboundConnections]>([:])

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
        for name in names { await closeConnections(name) }
        return WebhookDeliveryReport(
            delivered: results.reduce(0) { $0 + $1.1 }, failed: results.reduce(0) { $0 + $1.2 }, endpoints: results.map(\.3))
    }

    /// Sends to every enabled endpoint until the task is cancelled: a task per endpoint, started when the endpoint
    /// appears or is enabled, ended when it is removed or disabled. The board's version is looked at every
    /// ``WebhookSettings/poll``: a change wakes every endpoint's task at once, so a kill switch committed by any
    /// process reaches the receivers within the poll and the send.
    package func run() async {
        var running: [String: Task<Void, Never>] = [:]
        var seen: BoardVersion?
        let clock = ContinuousClock()
        var refreshed = clock.now - .seconds(1)
        while !Task.isCancelled {
            let version = try? board.version()
            let changed = version != nil && version != seen
            if changed {
                seen = version
                wakeup.wake()
            }
            if changed || clock.now - refreshed >= .milliseconds(500) {
                refreshed = clock.now
                let enabled = Set(((try? board.webhooks()) ?? []).filter(\.enabled).map(\.name))
                for (name, task) in running where !enabled.contains(name) {
                    task.cancel()
                    running[name] = nil
                }
                for name in enabled where running[name] == nil {
                    running[name] = Task { await self.follow(name) }
                }
            }
            try? await Task.sleep(for: settings.poll)
        }
        // Not waited for: a task in an attempt ends when the attempt notices (its connections close then, or with it).
        for task in running.values { task.cancel() }
    }

    /// One endpoint's loop in ``run()``.
    private func follow(_ name: String) async {
        following: while !Task.isCancelled {
            let generation = wakeup.generation
            let pass = await self.pass(name, force: false)
            switch pass.outcome {
            case .stopped: break following
            // Woken by the next change, and at least once a second all the same.
            case .caughtUp: await wakeup.wait(after: generation, upTo: .seconds(1))
            case .retry(let at):
                let wait = max(at.timeIntervalSinceNow, 0)
                // Woken at least once a second, so that a replay, an enable or a removal is seen.
                try? await Task.sleep(for: .milliseconds(Int64(min(wait, 1) * 1000)))
            }
        }
        await closeConnections(name)
    }

    /// What ``pass(_:force:)`` did.
    package struct Pass: Sendable {
        package var outcome: Outcome
        package var delivered = 0
        package var failed = 0
        package var line: String
    }

    /// Sends `name` what waits for it (see ``deliverOnce(force:)``). The cursor is written every
    /// ``WebhookSettings/cursorInterval`` while rows are sent, and when the pass ends.
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
        let moved = "\(name): its cursor moved (a replay or an enable); starting again from it"
        var pass = Pass(outcome: .caughtUp, line: "")
        // The cursor on the board, and how far this pass got: every row up to `through` is sent, or not for it.
        var recorded = endpoint.cursor
        var through = endpoint.cursor
        var attempts = endpoint.attempts
        // The status the cursor's last move records: the last 2xx answer.
        var lastStatus = endpoint.lastStatus.flatMap { (200..<300).contains($0) ? $0 : nil } ?? 200
        let clock = ContinuousClock()
        var recordedAt = clock.now
        // Writes the cursor at `through`; false when it moved on the board meanwhile.
        func record() -> Bool {
            guard through > recorded else { return true }
            guard (try? board.recordWebhookDelivered(name, from: recorded, through: through, status: lastStatus)) == true else {
                sentAhead.withLock { $0[name] = nil }
                return false
            }
            recorded = through
            recordedAt = clock.now
            forgetSent(name, through: through)
            return true
        }
        while !Task.isCancelled {
            guard let rows = try? board.auditRows(after: through, limit: settings.batch), let last = rows.last else { break }
            let ahead = sentAhead.withLock { $0[name] ?? [] }
            let wanted = rows.filter { Self.receives(endpoint, $0) && !ahead.contains($0.seq) }
            let order = wanted.filter(WebhookFormats.isStop) + wanted.filter { !WebhookFormats.isStop($0) }
            var done = Set<Int64>()
            for row in order {
                // Whether every row before it is sent: then the cursor may move to it.
                let first = !wanted.contains { $0.seq < row.seq && !done.contains($0.seq) }
                let sent = await send(row, to: endpoint, payload: payload, secret: secret, signingKey: signingKey)
                switch sent {
                case .success(let status):
                    pass.delivered += 1
                    attempts = 0
                    lastStatus = status
                    done.insert(row.seq)
                    if first {
                        through = row.seq
                        if clock.now - recordedAt >= settings.cursorInterval, !record() {
                            pass.line = moved
                            return pass
                        }
                    } else {
                        sentAhead.withLock { _ = $0[name, default: []].insert(row.seq) }
                    }
                case .failure(let failure):
                    guard record() else {
                        pass.line = moved
                        return pass
                    }
                    // A pass cut short by the end of delivery is no failure of the endpoint's.
                    if Task.isCancelled {
                        pass.line = "\(name): delivery ended at seq \(recorded)"
                        return pass
                    }
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
            // Every row of the batch is sent or not for this endpoint: the cursor may move past them all.
            through = max(through, last.seq)
            if rows.count < settings.batch { break }
            if clock.now - recordedAt >= settings.cursorInterval, !record() {
                pass.line = moved
                return pass
            }
        }
        guard record() else {
            pass.line = moved
            return pass
        }
        pass.line = "\(name): \(pass.delivered) delivered, caught up at seq \(recorded)"
        return pass
    }

    /// Closes the connections kept open to `name`.
    private func closeConnections(_ name: String) async {
        await connections.withLock { $0.removeValue(forKey: name) }?.close()
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
        let event = prepared.event(row, format: endpoint.format, payload: payload, signingKey: signingKey, now: board.clock.date())
        let headers = WebhookSigning.headers(
            id: event.id, timestamp: event.timestamp, content: event.content, secret: secret, v1a: event.v1a)
        var http = OutboundHTTP(
            connectTimeout: min(.seconds(3), settings.attemptTimeout), requestTimeout: settings.attemptTimeout, bodyLimit: 64 << 10,
            allowPrivateNetwork: settings.allowPrivate, allowLoopback: settings.allowPrivate)
        http.allowPlainHTTP = true
        http.party = "the webhook \(endpoint.name)"
        http.connections = connections.withLock { all in
            if let kept = all[endpoint.name] { return kept }
            let made = OutboundConnections()
            all[endpoint.name] = made
            return made
        }
        do {
            let answer = try await http.post(url, what: "URL", body: event.body, headers: headers)
            if (200..<300).contains(answer.status) { return .success(answer.status) }
            let redirect = (300..<400).contains(answer.status) ? ", a redirect, which Plugboard does not follow" : ""
            return .failure(Failure(status: answer.status, retryAfter: answer.retryAfter, message: "answered \(answer.status)\(redirect)"))
        } catch {
            return .failure(Failure(status: nil, message: error.description))
        }
    }
}
