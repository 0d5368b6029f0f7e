import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PlugboardHost
public import PlugboardModel
public import PlugboardPluginAPI
import Synchronization

/// Load reports: queued, sent after a jitter, and delivered when the host stops.
extension RemoteBoardSource {
    /// Queues the report and returns: it is sent a moment later (a random delay of up to ``reportDelay``, so that a
    /// fleet that reacted to the same change does not report in the same millisecond, and a newer report replaces one
    /// not sent yet). A report the server could not take is sent again while the source runs, with the event stream's
    /// backoff and jitter (at most ``maximumBackoff`` apart). A refusal of the token (401, 403) is returned by the next
    /// call, and the host stops reporting.
    public func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError) {
        let body =
            (try? JSONEncoder().encode(
                HostReport(hostId: identity.hostID, hostVersion: identity.hostVersion, stale: source, entries: entries)))
            ?? Data()
        let refusal = reports.withLock { outbox -> BoardError? in
            if outbox.refusal == nil { outbox.pending = body }
            return outbox.refusal
        }
        if let refusal { throw refusal }
        sendReports(after: Self.jitter(upTo: reportDelay))
    }

    /// The report waiting to be sent, whether a sender runs (and whether it waits to retry a failed send), the failed
    /// sends in a row, and a refusal that ends reporting.
    struct Outbox {
        var pending: Data?
        var sending = false
        var retrying = false
        var failures = 0
        var refusal: BoardError?
        /// The sender's wait before it sends (cancelled by ``RemoteBoardSource/deliverLoadReport()`` to send at once).
        var jitter: Task<Void, Never>?
    }

    /// Sends the pending report (and any that replaces it meanwhile) unless a sender already runs; `retry` when it is
    /// sent again after a failure.
    func sendReports(after delay: Duration, retry: Bool = false) {
        let jitter = reports.withLock { outbox -> Task<Void, Never>? in
            guard !outbox.sending, outbox.pending != nil, outbox.refusal == nil else { return nil }
            outbox.sending = true
            outbox.retrying = retry
            // A task of its own, so that cancelling the wait does not cancel the request that follows it.
            outbox.jitter = Task.detached { try? await Task.sleep(for: delay) }
            return outbox.jitter
        }
        guard let jitter else { return }
        Task.detached { [weak self] in
            await jitter.value
            await self?.drainReports()
        }
    }

    func drainReports() async {
        while let body = reports.withLock({ outbox -> Data? in
            defer { outbox.pending = nil }
            outbox.retrying = false
            if outbox.pending == nil { outbox.sending = false }
            return outbox.pending
        }) {
            do {
                try await post(body)
                reports.withLock { $0.failures = 0 }
            } catch {
                let failures = reports.withLock { outbox in
                    if error.code == .notAllowed { outbox.refusal = error } else if outbox.pending == nil { outbox.pending = body }
                    outbox.sending = false
                    outbox.failures += 1
                    return outbox.failures
                }
                guard error.code != .notAllowed else {
                    logger.warning("the load report was not delivered: \(error.message)")
                    return
                }
                // Said once for a run of failures: a server that is down for an hour does not fill the log.
                if failures == 1 { logger.warning("the load report was not delivered: \(error.message); it is sent again") }
                // Sent again while the source runs (a server that was busy or restarting takes it later, though the
                // event stream stayed connected); a finished source leaves it to the next start.
                if streaming.withLock({ $0 != nil }) {
                    sendReports(after: Self.backoff(failures: failures, initial: initialBackoff, maximum: maximumBackoff), retry: true)
                }
                return
            }
        }
    }

    func post(_ body: Data) async throws(BoardError) {
        var request = self.request("/api/host/report")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: Self.answerTimeout)
            switch response.status.code {
            case 200..<300: _ = try? await response.body.collect(upTo: 1 << 16)
            case 401, 403: throw BoardError(.notAllowed, "\(name) refused the load report: \(try await Self.message(response))")
            default:
                throw BoardError(
                    .io, "\(name) did not store the load report (\(response.status.code)): \(try await Self.message(response))")
            }
        } catch let error as BoardError {
            throw error
        } catch {
            throw BoardError(.io, "\(name) is unreachable: \(Self.describe(error))")
        }
    }

    /// Sends the pending load report now, without its jitter (a sender already waiting, or waiting to retry, stops
    /// waiting), and returns once the server took it or could not, waiting at most 2 seconds: a server that is down
    /// costs no more than its refused connection, and the report is sent again later.
    public func deliverLoadReport() async {
        sendReports(after: .zero)
        reports.withLock { outbox in
            outbox.retrying = false
            return outbox.jitter
        }?.cancel()
        let deadline = ContinuousClock.now + .seconds(2)
        while reports.withLock({ $0.sending && !$0.retrying }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Stops the event stream and delivers the pending load report (waiting at most 2 seconds for the server).
    public func finish() async {
        streaming.withLock {
            $0?.cancel()
            $0 = nil
        }
        await deliverLoadReport()
    }
}
