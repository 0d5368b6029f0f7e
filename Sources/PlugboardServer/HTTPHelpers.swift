import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PlugboardOperations
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension HTTPField.Name {
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
    static let plugboardEnvironment = HTTPField.Name("X-Plugboard-Environment")!
    static let unleashAppName = HTTPField.Name("unleash-appname")!
    static let unleashInstanceID = HTTPField.Name("unleash-instanceid")!
    static let unleashSDK = HTTPField.Name("unleash-sdk")!
}

/// Building responses.
enum Reply {
    static func json(_ status: HTTPResponse.Status, _ body: ByteBuffer, etag: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let etag { headers[.eTag] = etag }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    static func json(_ status: HTTPResponse.Status, object: Any, etag: String? = nil) -> Response {
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return json(status, ByteBuffer(bytes: data), etag: etag)
    }

    static func notModified(etag: String) -> Response {
        Response(status: .notModified, headers: [.eTag: etag])
    }

    static func accepted() -> Response { Response(status: .accepted) }

    /// A server-sent-event response that writes `stream` until the client goes, the stream ends or the server shuts
    /// down (`X-Accel-Buffering: no` tells a reverse proxy not to buffer it).
    static func eventStream(_ stream: AsyncStream<ByteBuffer>) -> Response {
        let headers: HTTPFields = [
            .contentType: "text/event-stream", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no",
        ]
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                for await chunk in stream.cancelOnGracefulShutdown() { try await writer.write(chunk) }
                try await writer.finish(nil)
            })
    }

    /// Whether an `If-None-Match` header matches `etag` (weak comparison, lists and `*` understood).
    static func matches(_ fields: HTTPFields, _ etag: String) -> Bool {
        guard let header = fields[.ifNoneMatch] else { return false }
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { candidate in
            var tag = candidate.httpTrimmed
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == bare
        }
    }
}

/// Reading request bodies with a size limit.
enum Body {
    enum Failure: Error {
        case tooLarge(Int)
        case unreadable
    }

    /// The whole body, or `.tooLarge` as soon as it passes `limit` bytes (checked on `Content-Length` first).
    static func collect(_ request: Request, limit: Int) async -> Result<ByteBuffer, Failure> {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { return .failure(.tooLarge(limit)) }
        var buffer = ByteBuffer()
        do {
            for try await var chunk in request.body {
                guard buffer.readableBytes + chunk.readableBytes <= limit else { return .failure(.tooLarge(limit)) }
                buffer.writeBuffer(&chunk)
            }
        } catch {
            return .failure(.unreadable)
        }
        return .success(buffer)
    }

    /// Decodes a JSON body, or the response that refuses it (413 too large, 400 not JSON of the expected shape).
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int, what: String, allowEmpty: Bool = false) async
        -> Result<T, Refusal>
    {
        switch await collectOrRefuse(request, limit: limit) {
        case .success(let buffer): return parse(type, buffer, what: what, allowEmpty: allowEmpty)
        case .failure(let failure): return .failure(failure)
        }
    }

    /// ``decode(_:_:limit:what:allowEmpty:)`` with the decoding done on the lane of heavy work (``HeavyWork``): what
    /// SDKs and hosts report may be large, and decoding it must not hold the threads that answer other requests.
    static func decodeHeavy<T: Decodable & Sendable>(_ type: T.Type, _ request: Request, limit: Int, what: String) async throws -> T {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw Refusal(.contentTooLarge, "the request body is larger than \(limit) bytes; send less")
        }
        // A place first, the body then: requests waiting for a place hold no body in memory.
        guard let place = await HeavyWork.bodies.enter() else { throw HeavyWork.busy() }
        defer { place.leave() }
        let buffer: ByteBuffer
        switch await collectOrRefuse(request, limit: limit) {
        case .success(let collected): buffer = collected
        case .failure(let failure): throw failure
        }
        return try await HeavyWork.run(heavy: buffer.readableBytes > HeavyWork.smallBody) { () throws -> T in
            try parse(type, buffer, what: what, allowEmpty: false).get()
        }
    }

    private static func collectOrRefuse(_ request: Request, limit: Int) async -> Result<ByteBuffer, Refusal> {
        switch await collect(request, limit: limit) {
        case .success(let collected): return .success(collected)
        case .failure(.tooLarge(let limit)):
            return .failure(Refusal(.contentTooLarge, "the request body is larger than \(limit) bytes; send less"))
        case .failure(.unreadable):
            return .failure(Refusal(.badRequest, "the request body could not be read; send it again"))
        }
    }

    private static func parse<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer, what: String, allowEmpty: Bool) -> Result<T, Refusal> {
        let data = Data(buffer.readableBytesView)
        let text = data.isEmpty && allowEmpty ? Data("{}".utf8) : data
        do {
            return .success(try JSONDecoder().decode(T.self, from: text))
        } catch {
            return .failure(
                Refusal(.badRequest, "the body of \(what) is not valid JSON of the expected shape: \(describe(error))")
            )
        }
    }

    static func describe(_ error: any Error) -> String { OperationJSON.describe(error) }
}

/// The lane of heavy work: decoding and checking what SDKs and hosts report runs here, one at a time, on a thread of its
/// own, off the threads that answer requests: a flood of large reports costs at most one core, and never holds the
/// threads that answer health checks, snapshots and event streams. At most 32 bodies are read into memory at once; past ``queueLimit``
/// waiting, a request is refused with `503`.
enum HeavyWork {
    static let queueLimit = 128
    static let lane = ConcurrencyLimit(width: 1, queueLimit: queueLimit)
    /// At most this many reports' bodies are read into memory at once (each at most the body limit, 1 MiB by default).
    static let bodies = ConcurrencyLimit(width: 32, queueLimit: queueLimit)

    static func busy() -> Refusal {
        Refusal(.serviceUnavailable, "the server has too many reports to read; try again in a moment").retryAfter(1)
    }
    private static let worker = WorkerThreads(name: "plugboard-telemetry", count: 1)

    /// A body this small (an SDK's usual metrics, a host's usual report) is decoded where it arrives.
    static let smallBody = 64 << 10

    /// Runs `body` on the lane when `heavy`, else where it is called.
    static func run<T: Sendable>(heavy: Bool = true, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard heavy else { return try body() }
        guard let slot = await lane.enter() else { throw busy() }
        defer { slot.leave() }
        return try await worker.run(body)
    }
}

/// Threads of their own that run the jobs given to them in order, optionally at a lower scheduling priority than the
/// rest of the process: blocking work (the board's connection, decoding) never holds the few threads that answer
/// requests, and never waits for a thread of a shared pool that other work has used up.
final class WorkerThreads: Sendable {
    private let jobs = Mutex<(queue: [@Sendable () -> Void], stopped: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)
    private let count: Int

    init(name: String, count: Int, nice: Int32 = 0) {
        self.count = max(1, count)
        for index in 0..<self.count {
            let thread = Thread { [self] in
                #if canImport(Glibc) || canImport(Musl)
                // On Linux the nice value is the calling thread's own.
                if nice != 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) }
                #endif
                while true {
                    ready.wait()
                    let (job, stopped) = jobs.withLock { jobs in
                        (jobs.queue.isEmpty ? nil : jobs.queue.removeFirst(), jobs.stopped)
                    }
                    if let job { job() } else if stopped { return }
                }
            }
            thread.name = count > 1 ? "\(name)-\(index)" : name
            thread.start()
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        let queued = jobs.withLock { jobs in
            if !jobs.stopped { jobs.queue.append(job) }
            return !jobs.stopped
        }
        // Once stopped (the server is closing), a late job runs where it was given.
        guard queued else { return job() }
        ready.signal()
    }

    /// Lets the threads end once the jobs given so far are done.
    func stop() {
        jobs.withLock { $0.stopped = true }
        for _ in 0..<count { ready.signal() }
    }

    /// Runs `body` on one of the threads and returns what it returns.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// Request logs and `/metrics` counts for every request, by the route's pattern as Hummingbird matched it
/// (`context.endpointPath`, `/api/admin/plugin.show` or `/api/host/artifacts/{sha256}`): a bounded set of labels. Never logs a token or a body.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            finish(request, context, status: response.status.code, since: start)
            return response
        } catch {
            finish(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, since: start)
            throw error
        }
    }

    private func finish(_ request: Request, _ context: Context, status: Int, since start: ContinuousClock.Instant) {
        let route = Self.route(context.endpointPath)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        metrics.record(route: route, status: status, seconds: seconds)
        if logger.logLevel <= .info {
            logger.info(
                "request",
                metadata: [
                    "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(status)",
                    "duration_ms": "\(String(format: "%.2f", seconds * 1000))",
                    "app": "\(request.headers[.unleashAppName] ?? "-")",
                ])
        }
    }

    /// The label of a request's route: the pattern Hummingbird matched, or `other` when no route matched (Hummingbird
    /// names that `NotFound`, and leaves it unset when a middleware answers first).
    static func route(_ endpointPath: String?) -> String {
        guard let endpointPath, endpointPath.hasPrefix("/") else { return "other" }
        return endpointPath
    }
}

extension StringProtocol {
    /// The text without the spaces and tabs around it (a header value's optional white space), read as UTF-8 bytes:
    /// Foundation's `trimmingCharacters(in:)` goes through `NSString`: a tenth of the server's time on the `304` path.
    var httpTrimmed: String {
        let text = Substring(self)
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while start < end {
            let last = bytes.index(before: end)
            guard bytes[last] == 0x20 || bytes[last] == 0x09 else { break }
            end = last
        }
        return String(text[start..<end])
    }
}
