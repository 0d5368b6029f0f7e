import AsyncHTTPClient
import Crypto
import Dispatch
package import Foundation
import NIOCore
import NIOHTTP1
import PlugboardClient
package import PlugboardModel
package import PlugboardOperations
import PlugboardPluginAPI
import PlugboardStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The CLI's side of the operations API: sends an ``OperationRequest`` to `plugboard serve --admin` and gives back what
/// performing it on the board file would have given: the same value, the same notes, the same ``BoardError``.
package struct OperationsClient: Sendable {
    /// The server's base URL (`https://board.example.com:4242`), without `/api/admin`.
    package let server: URL
    /// The access token (`pba_…`); sent only in the `Authorization` header.
    let token: String
    /// The principal automation declares it acts for (`--as`).
    let onBehalfOf: String?

    /// The HTTP settings of the CLI (``PlugboardClient/HTTPClientSettings/cli``): trust, waits, failure sentences.
    static let settings = HTTPClientSettings.cli

    /// How long a request may take, whole (connecting, sending, the answer's head and its last byte): generous, for
    /// a large listing from a busy server; `$PLUGBOARD_TIMEOUT` (seconds) sets another. An answer trickled a byte at a
    /// time ends at this deadline all the same.
    static let timeout = settings.deadline

    /// How long an upload of an artifact or a download of a backup may take, whole: they move up to hundreds of MiB.
    static let transferTimeout: Duration = .seconds(24 * 3600)

    /// The most an answer may hold (a listing of 10,000 plug-ins is about 3 MB).
    static let answerLimit = 256 << 20

    /// A client of the server at `server` (http or https, no path beyond `/`).
    package init(server text: String, token: String, onBehalfOf: String? = nil) throws(BoardError) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil, url.query == nil, url.path.isEmpty || url.path == "/"
        else {
            throw BoardError(
                .invalidInput, "--server '\(text)' is not the URL of a server, such as https://board.example.com:4242")
        }
        server = url
        guard !token.isEmpty else {
            throw BoardError(
                .notAllowed,
                "no access token for \(text): set PLUGBOARD_TOKEN, or run plugboard login \(text)")
        }
        guard !token.contains(where: { $0.isNewline || $0 == " " }) else {
            throw BoardError(
                .invalidInput, "the access token holds spaces or line breaks; give it as plugboard access-token create printed it")
        }
        self.token = token
        self.onBehalfOf = onBehalfOf
    }

    /// A client that sends no access token, for the routes of a sign-in (`/api/login/`).
    package init(signingInTo text: String) throws(BoardError) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil, url.query == nil, url.path.isEmpty || url.path == "/"
        else {
            throw BoardError(.invalidInput, "'\(text)' is not the URL of a server, such as https://board.example.com:4242")
        }
        server = url
        token = ""
        onBehalfOf = nil
    }

    /// Performs `request` on the server's board.
    package func send<R: OperationRequest>(_ request: R) throws(BoardError) -> OperationReply<R.Response> {
        let answer = try exchange(method: "POST", url: endpoint("/" + R.name), body: try request.wireBody())
        let notes = answer.notes
        guard answer.status == 200 else { throw Self.refusal(answer, server: server.absoluteString) }
        do {
            return OperationReply(try R.decodeResponse(answer.body), notes: notes)
        } catch {
            throw BoardError(
                .io,
                "the server at \(server.absoluteString) answered \(R.name) with JSON this plugboard cannot read; is it the same version?"
            )
        }
    }

    /// Submits `request`: its answer, or the change request it opened where it waits for approvals (`202`).
    package func submit<R: OperationRequest>(_ request: R, options: ChangeOptions) throws(BoardError) -> Submission<R.Response> {
        var headers: [(String, String)] = []
        if let at = options.at { headers.append((OperationsWire.changeAtHeader, OperationsWire.headerValue(at))) }
        if let reason = options.emergencyReason { headers.append((OperationsWire.emergencyHeader, OperationsWire.headerValue(reason))) }
        let answer = try exchange(method: "POST", url: endpoint("/" + R.name), body: try request.wireBody(), headers: headers)
        guard answer.status == 202 else {
            guard answer.status == 200 else { throw Self.refusal(answer, server: server.absoluteString) }
            return .performed(OperationReply(try decode(R.Response.self, answer.body, R.name), notes: answer.notes))
        }
        return .requested(OperationReply(try decode(ChangeRequestResult.self, answer.body, R.name), notes: answer.notes))
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: Data, _ name: String) throws(BoardError) -> T {
        do { return try OperationJSON.decoder().decode(T.self, from: body) } catch {
            throw BoardError(
                .io, "the server at \(server.absoluteString) answered \(name) with JSON this plugboard cannot read; is it the same version?"
            )
        }
    }

    /// Uploads the artifact at `path` (streamed) and returns its SHA-256, by which `plugin register` names it.
    package func upload(_ path: String) throws(BoardError) -> String {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int,
            let sha256 = FileDigest.sha256(ofFile: path)
        else {
            throw BoardError(.io, "cannot read the artifact \(path)")
        }
        let answer = try exchange(method: "PUT", url: endpoint("/artifacts/" + sha256), body: nil, file: (path, size))
        guard answer.status == 200 else { throw Self.refusal(answer, server: server.absoluteString) }
        return sha256
    }

    /// Downloads a backup of the served board to `destination` (board admins): written to a private temporary file
    /// beside it, its SHA-256 checked against the server's, then renamed into place. Returns the server's description.
    package func downloadBackup(to destination: String) throws(BoardError) -> BackupDownload.Description {
        let temporary = destination + ".download-\(getpid())"
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw BoardError(.io, "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        var kept = false
        defer {
            if fd >= 0 { close(fd) }
            if !kept { Board.removeCopy(temporary) }
        }
        let answer = try exchange(method: "GET", url: endpoint("/backup"), body: nil, into: fd)
        guard answer.status == 200 else { throw Self.refusal(answer, server: server.absoluteString) }
        guard let text = answer.backup.map(OperationsWire.headerText),
            let description = try? OperationJSON.decoder().decode(BackupDownload.Description.self, from: Data(text.utf8))
        else { throw BoardError(.io, "the server at \(server.absoluteString) sent a backup without its description") }
        guard answer.sha256 == description.sha256, answer.size == description.size else {
            throw BoardError(
                .integrity, "the backup from \(server.absoluteString) arrived damaged (its SHA-256 or size differs); nothing was written")
        }
        guard fsync(fd) == 0 else { throw BoardError(.io, "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        close(fd)
        fd = -1
        // The server says it verified the backup; this machine does not take its word: the file must open as a board whose
        // audit chain and state root verify here, at the head the server described.
        let head = try Board.verifyCopy(at: temporary, describing: "the backup downloaded from \(server.absoluteString)")
        guard head.seq == description.seq, head.hash == description.hash else {
            throw BoardError(
                .integrity,
                "the backup downloaded from \(server.absoluteString) verifies to audit row \(head.seq), not to the row \(description.seq) the server described; nothing was written"
            )
        }
        guard rename(temporary, destination) == 0 else {
            throw BoardError(.io, "cannot write \(destination): \(String(cString: strerror(errno)))")
        }
        kept = true
        return description.verified(head)
    }

    /// The URL of `path` under the server's `/api/admin`.
    func endpoint(_ path: String) -> String {
        var url = server.absoluteString
        if url.hasSuffix("/") { url.removeLast() }
        return url + "/api/admin" + path
    }

    /// Asks the server who the token acts as (`GET /api/admin/whoami`).
    package func whoami() throws(BoardError) -> [String: Any] {
        let answer = try exchange(method: "GET", url: endpoint("/whoami"), body: nil)
        guard answer.status == 200 else { throw Self.refusal(answer, server: server.absoluteString) }
        return (try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]) ?? [:]
    }

    struct Answer: Sendable {
        var status: Int
        var body: Data
        var notes: [String]
        var retryAfter: String?
        /// For a body written to a file: its SHA-256 and size, and the backup's description header.
        var sha256: String? = nil
        var size: Int64 = 0
        var backup: String? = nil
    }

    /// The process's HTTP client, made on first use (`$PLUGBOARD_CA_FILE` does not change while it runs).
    static let client = HTTPClientSettings.cliClient

    /// One HTTP exchange, waited for on this thread (the CLI is synchronous).
    /// With `into`, a successful answer's body is written to that file descriptor as it comes (and hashed), not kept.
    func exchange(
        method: String, url: String, body: Data?, file: (path: String, size: Int)? = nil, into fd: Int32? = nil,
        headers: [(String, String)] = []
    )
        throws(BoardError)
        -> Answer
    {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.method = HTTPMethod(rawValue: method)
        if !token.isEmpty { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "plugboard-cli")
        if let onBehalfOf { request.headers.add(name: OperationsWire.onBehalfOfHeader, value: onBehalfOf) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        if let file {
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.body = .stream(FileChunks(path: file.path), length: .known(Int64(file.size)))
        }
        let server = self.server.absoluteString
        let client = try Self.client.get()
        let result = Mutex<Result<Answer, BoardError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let sending = request
        let deadline = fd == nil && file == nil ? Self.timeout : Self.transferTimeout
        // The task writes to a descriptor of its own: one that outlives the deadline may still be writing when the caller
        // has closed `fd` and its number is reused.
        let own = fd.map { dup($0) }
        if let own, own < 0 { throw BoardError(.io, "cannot write the download: \(String(cString: strerror(errno)))") }
        let task = Task {
            defer { if let own { close(own) } }
            let fd = own
            let outcome: Result<Answer, BoardError>
            do {
                let response = try await client.execute(sending, timeout: .nanoseconds(Self.nanoseconds(deadline)))
                var answer = Answer(
                    status: Int(response.status.code), body: Data(),
                    notes: response.headers[OperationsWire.noteHeader].map { Validate.escaped(OperationsWire.headerText($0)) },
                    retryAfter: response.headers.first(name: "Retry-After"), backup: response.headers.first(name: BackupDownload.header))
                if let fd, response.status.code == 200 {
                    var hasher = SHA256()
                    for try await chunk in response.body {
                        try chunk.withUnsafeReadableBytes { bytes in
                            hasher.update(bufferPointer: bytes)
                            try ArtifactUploads.writeAll(fd, bytes, what: "the download")
                        }
                        answer.size += Int64(chunk.readableBytes)
                    }
                    answer.sha256 = hasher.finalize().hex
                } else {
                    answer.body = Data(try await response.body.collect(upTo: Self.answerLimit).readableBytesView)
                }
                outcome = .success(answer)
            } catch {
                outcome = .failure(BoardError(.io, Self.sentence(for: error, server: server)))
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        // The whole exchange has one deadline: the client's own timeout ends at the answer's head, and its read timeout
        // restarts with every byte, so a server that trickles its answer would hold the CLI for ever.
        if done.wait(timeout: .now() + .nanoseconds(Int(clamping: Self.nanoseconds(deadline)))) == .timedOut {
            task.cancel()
            throw BoardError(.io, Self.deadlineSentence(server, deadline))
        }
        guard let outcome = result.withLock({ $0 }) else { throw BoardError(.io, "the request to \(server) did not finish") }
        return try outcome.get()
    }

    /// `duration` in nanoseconds, for NIO's and Dispatch's deadlines.
    static func nanoseconds(_ duration: Duration) -> Int64 { HTTPClientSettings.nanoseconds(duration) }

    /// The sentence for a request that did not end within `deadline`.
    static func deadlineSentence(_ server: String, _ deadline: Duration) -> String { settings.deadlineSentence(server, deadline) }

    /// The refusal an answer carries, as the ``BoardError`` the board would have thrown.
    static func refusal(_ answer: Answer, server: String) -> BoardError {
        if let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any], let code = object["error"] as? String,
            let message = object["message"] as? String
        {
            // What a server says reaches a terminal: escaped, so that an escape sequence it sends shows as text.
            let escaped = message.split(separator: "\n").map { Validate.escaped(String($0)) }
            return BoardError(BoardError.Code(rawValue: code), escaped.joined(separator: "\n"))
        }
        return BoardError(
            .io,
            "the server at \(server) answered HTTP \(answer.status) without a Plugboard answer; is --server the address of plugboard serve --admin?"
        )
    }

    /// Why a request failed to reach the server, as one sentence.
    static func sentence(for error: any Error, server: String) -> String { settings.sentence(for: error, server: server) }
}

/// A file read a chunk at a time as it is sent: one chunk in memory, whatever the file's size.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle?

        mutating func next() async throws -> ByteBuffer? {
            guard let handle, let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty else {
                try? handle?.close()
                return nil
            }
            return ByteBuffer(bytes: chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(handle: FileHandle(forReadingAtPath: path)) }
}
