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
    /// The connection delivery reads through: a read-only one of its own in `serve`, so that its reads never wait for,
    /// nor hold up, the server's writes (a board's connection is serialized); the board itself otherwise. Writes (the
    /// cursor, a failure, a 410's disable) go through ``board``.
    let reader: Board
    /// The endpoints' secrets, read through ``reader``.
    let secrets: BoardSecureStorage
    package let settings: WebhookSettings
    let principal: Principal
    /// Rows sent ahead of their turn (kill switches, aborts) and not yet behind the cursor, by endpoint.
    let sentAhead = Mutex<[String: Set<Int64>]>([:])
    /// Rung when the board changes: every endpoint's task looks for new rows.
    let wakeup = Wakeup()
    /// Bodies and `v1a` signatures, made once for every endpoint of a format.
    let prepared = PreparedEvents()
    /// How far each endpoint got, written to the board every ``WebhookSettings/cursorInterval``.
    let progress = CursorProgress()
    /// Held while cursors are written, so that two writes never race with the same moves.
    let flushing = Mutex(())
    /// Each endpoint's connections, kept open between its deliveries.
    let connections = Mutex<[String: OutboundConnections]>([:])
    /// The event loop the connections run on while ``run(boardChanges:)`` runs (nil otherwise: the process's shared ones).
    let sendLoop = Mutex<OutboundEventLoop?>(nil)

    /// Delivery for `board`, read through `reader` (the board itself by default), whose secrets `secrets` opens; an
    /// endpoint that answers 410 Gone is disabled by `plugboard/webhook-delivery` via `via`.
    package init(
        board: Board, reader: Board? = nil, secrets: BoardSecureStorage, settings: WebhookSettings, via: String
    ) throws(BoardError) {
        self.board = board
        self.reader = reader ?? board
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
        let names = try reader.webhooks().filter(\.enabled).map(\.name)
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
        flush()
        for name in names { await closeConnections(name) }
        return WebhookDeliveryReport(
            delivered: results.reduce(0) { $0 + $1.1 }, failed: results.reduce(0) { $0 + $1.2 }, endpoints: results.map(\.3))
    }

    /// Sends to every enabled endpoint until the task is cancelled: a task per endpoint, started when the endpoint
    /// appears or is enabled, ended when it is removed or disabled. The board's version is looked at when
    /// `boardChanges` rings (rung by the process's own look at the board, `plugboard serve`'s every `--poll-ms`), every
    /// ``WebhookSettings/cursorInterval`` while a cursor waits to be written, and at least every
    /// ``WebhookSettings/ringWait``: a new audit row wakes every endpoint's task at once, so a kill switch committed by
    /// any process reaches the receivers within the server's poll and the send (a write without one, such as a
    /// cursor's, wakes none).
    /// Delivery runs on a thread of its own in the background (``LowPriorityExecutor``), and its connections on an
    /// event loop of their own, also in the background (``OutboundEventLoop``), so that it takes the processor only
    /// when the board's writers and the server's requests leave it free, and its share of it when its work has waited
    /// too long (``BackgroundPriority``). When the task is cancelled, every endpoint's task
    /// ends (an attempt in progress is cancelled), its connections close, and the event loop is shut down.
    package func run(boardChanges: Wakeup) async {
        let sending = await OutboundEventLoop.background()
        sendLoop.withLock { $0 = sending }
        // What gives the two threads their share of the processor when work waits for them.
        let watch = BackgroundPriority.watch {
            LowPriorityExecutor.shared.watch()
            sending.watch()
        }
        await withTaskExecutorPreference(LowPriorityExecutor.shared) { await self.loop(boardChanges) }
        watch.cancel()
        await watch.value
        sendLoop.withLock { $0 = nil }
        await sending.shutdown()
    }

    /// ``run(boardChanges:)``'s loop, on ``LowPriorityExecutor``.
    private func loop(_ boardChanges: Wakeup) async {
        var running: [String: Task<Void, Never>] = [:]
        var (version, head): (BoardVersion?, Int64?) = (nil, nil)
        let clock = ContinuousClock()
        var refreshed = clock.now - .seconds(1)
        var flushed = clock.now
        while !Task.isCancelled {
            // Seen before the look, so that a ring during the look ends the wait below at once.
            let seen = boardChanges.generation
            if clock.now - flushed >= settings.cursorInterval {
                flushed = clock.now
                if progress.hasPending { await writing { self.flush() } }
            }
            var changed = false
            if let now = try? reader.version(), now != version {
                version = now
                let last = try? reader.auditHead()
                changed = last != head
                head = last
            }
            if changed { wakeup.wake() }
            if changed || clock.now - refreshed >= .milliseconds(500) {
                refreshed = clock.now
                let enabled = Set(((try? reader.webhooks()) ?? []).filter(\.enabled).map(\.name))
                for (name, task) in running where !enabled.contains(name) {
                    task.cancel()
                    running[name] = nil
                }
                for name in enabled where running[name] == nil {
                    running[name] = Task(executorPreference: LowPriorityExecutor.shared) { await self.follow(name) }
                }
            }
            // Until the next ring; cursors that wait to be written are written in their interval all the same.
            await boardChanges.wait(after: seen, upTo: progress.hasPending ? settings.cursorInterval : settings.ringWait)
        }
        // An attempt in progress is cancelled with its task; each task closes its connections as it ends.
        for task in running.values { task.cancel() }
        for task in running.values { await task.value }
        await writing { self.flush() }
    }

    /// One endpoint's loop in ``run(boardChanges:)``.
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

    /// Sends `name` what waits for it (see ``deliverOnce(force:)``). How far it got is written with the next
    /// ``flush(_:)``: in ``run(boardChanges:)`` every ``WebhookSettings/cursorInterval``, and before a failure is recorded.
    package func pass(_ name: String, force: Bool) async -> Pass {
        let endpoint: WebhookEndpoint
        let secret: Data
        let signingKey: Data?
        let boardID: String
        do {
            endpoint = try reader.webhook(name)
            guard endpoint.enabled else { return Pass(outcome: .stopped, line: "\(name): disabled") }
            if !force, let next = endpoint.nextAttemptAt.flatMap(Milliseconds.parse), next > board.clock.date() {
                return Pass(outcome: .retry(at: next), line: "\(name): next attempt at \(endpoint.nextAttemptAt ?? "")")
            }
            secret = try secrets.webhookSecret(name: name)
            signingKey = try secrets.webhookSigningPrivateKey()
            boardID = try reader.info("board_id") ?? "board"
        } catch {
            return Pass(outcome: .stopped, line: "\(name): \(error.message)")
        }
        let payload = WebhookPayload(boardID: boardID, consoleURL: settings.consoleURL)
        let moved = "\(name): its cursor moved (a replay or an enable); starting again from it"
        var pass = Pass(outcome: .caughtUp, line: "")
        var attempts = endpoint.attempts
        // The status the cursor's next move records: the last 2xx answer.
        var lastStatus = endpoint.lastStatus.flatMap { (200..<300).contains($0) ? $0 : nil } ?? 200
        // How far this endpoint got: every row up to `through` is sent, or not for it (written with the next flush).
        let start = progress.start(name, cursor: endpoint.cursor, status: lastStatus)
        var through = start.from
        let epoch = start.epoch
        while !Task.isCancelled {
            guard let rows = try? reader.auditRows(after: through, limit: settings.batch), let last = rows.last else { break }
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
                        guard progress.advance(name, epoch: epoch, through: through, status: status) else {
                            pass.line = moved
                            return pass
                        }
                    } else {
                        sentAhead.withLock { _ = $0[name, default: []].insert(row.seq) }
                    }
                case .failure(let failure):
                    // What was sent is written first: a cursor's write ends the endpoint's attempts.
                    guard await !writing({ self.flush(name) }).contains(name) else {
                        pass.line = moved
                        return pass
                    }
                    // A pass cut short by the end of delivery is no failure of the endpoint's.
                    if Task.isCancelled {
                        pass.line = "\(name): delivery ended at seq \(through)"
                        return pass
                    }
                    pass.failed += 1
                    attempts += 1
                    if failure.status == 410 {
                        let reason = "the endpoint answered 410 Gone at seq \(row.seq)"
                        await writing { _ = try? self.board.setWebhookEnabled(name, false, reason: reason, by: self.principal) }
                        pass.outcome = .stopped
                        pass.line = "\(name): answered 410 Gone; disabled"
                        return pass
                    }
                    let now = board.clock.date()
                    let wait = settings.wait(afterAttempts: attempts, retryAfter: failure.retryAfter, now: now)
                    let next = now.addingTimeInterval(WebhookSettings.seconds(wait))
                    await writing {
                        try? self.board.recordWebhookFailed(name, status: failure.status, error: failure.message, nextAttempt: next)
                    }
                    pass.outcome = .retry(at: next)
                    pass.line = "\(name): seq \(row.seq) failed (\(failure.message)); next attempt at \(Timestamp.format(next))"
                    return pass
                }
            }
            // Every row of the batch is sent or not for this endpoint: the cursor may move past them all.
            through = max(through, last.seq)
            guard progress.advance(name, epoch: epoch, through: through, status: lastStatus) else {
                pass.line = moved
                return pass
            }
            if rows.count < settings.batch { break }
        }
        pass.line = "\(name): \(pass.delivered) delivered, caught up at seq \(through)"
        return pass
    }

    /// Writes the cursors that moved (of `name` only, when given) in one transaction, and answers the names whose
    /// cursor had moved on the board meanwhile (their progress is dropped). A write that fails is tried again at the
    /// next flush.
    @discardableResult
    func flush(_ name: String? = nil) -> Set<String> {
        flushing.withLock { _ in
            let moves = progress.pending(name)
            guard !moves.isEmpty, let moved = try? board.recordWebhooksDelivered(moves) else { return [] }
            progress.written(moves, moved: moved)
            for move in moves {
                if moved.contains(move.name) {
                    sentAhead.withLock { $0[move.name] = nil }
                } else {
                    forgetSent(move.name, through: move.through)
                }
            }
            return moved
        }
    }

    /// Runs `write`, a write to the board, on the process's shared threads rather than on delivery's background thread
    /// (``LowPriorityExecutor``), which any other thread may keep from the processor: the board's write lock, which
    /// every writer of every process waits for, is never held by a thread that is not running.
    @discardableResult
    private func writing<T: Sendable>(_ write: @escaping @Sendable () -> T) async -> T {
        await Task(executorPreference: globalConcurrentExecutor) { write() }.value
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
        let loop = sendLoop.withLock { $0 }
        http.connections = connections.withLock { all in
            if let kept = all[endpoint.name] { return kept }
            let made = loop.map(OutboundConnections.init(on:)) ?? OutboundConnections()
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
