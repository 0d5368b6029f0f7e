import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PlugboardClient
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import Synchronization

/// HTTP requests to the server, the cache, and what a failure is called.
extension RemoteBoardSource {
    /// The snapshot in memory, or else the one in the cache folder, verified like one from the server (signed by the
    /// board, of this environment, not older than the anchor): a cache that does not verify is refused.
    func cachedSnapshot(
        version: BoardVersion, environment: String, anchor: AuditCheckpoint?, because reason: String, unproven: Bool = false
    ) throws(BoardError) -> SourceSnapshot {
        if state.withLock({ $0.view == nil }), let disk = HostCache.read(cacheFolder) {
            let (view, statement): (HostView, SnapshotStatement)
            do { (view, statement) = try verified(disk.snapshot, environment: environment, anchor: anchor) } catch {
                throw BoardError(.integrity, "the cached snapshot in \(cacheFolder) is refused: \(error.message)")
            }
            state.withLock {
                $0.view = view
                $0.statement = statement
                $0.validUntil = statement.expiresAt
                $0.fetchedAt = disk.fetchedAt
            }
        }
        guard state.withLock({ $0.view != nil }) else {
            if unproven { throw BoardError(.integrity, "\(name) \(reason)") }
            throw BoardError(
                .io,
                "\(name) is unreachable (\(reason)) and \(cacheFolder) holds no snapshot yet; the host loads nothing and retries when the server answers"
            )
        }
        return current(version: version, unreachable: reason)
    }

    func fetchArtifact(_ sha: String) async throws {
        let response = try await client.execute(request("/api/host/artifacts/" + sha), timeout: .seconds(10))
        guard response.status == .ok else {
            throw Unreachable(reason: "the server answered \(response.status.code): \(try await Self.message(response))")
        }
        try await HostCache.storeArtifact(cacheFolder, sha256: sha, from: response.body, limit: maximumArtifactBytes)
    }

    func request(_ path: String) -> HTTPClientRequest {
        var base = server.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return request(url: base + path)
    }

    /// A request to `url` with the host's token.
    func request(url: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: token)
        request.headers.add(name: "User-Agent", value: "plugboard-host")
        return request
    }

    static func message(_ response: HTTPClientResponse) async throws -> String {
        let body = try await response.body.collect(upTo: 1 << 16)
        struct Failure: Decodable { let message: String? }
        return (try? JSONDecoder().decode(Failure.self, from: Data(body.readableBytesView)).message).flatMap { $0 } ?? "no message"
    }

    /// A network error in a few words.
    static func describe(_ error: any Error) -> String { settings.words(for: error) }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    /// Why the server could not be used, in a few words.
    struct Unreachable: Error {
        let reason: String
        /// The server said it cannot prove the board (rather than failing to answer).
        var unproven = false
    }
}
