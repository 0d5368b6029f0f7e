import Foundation
import Hummingbird
import HummingbirdTesting
import PlugboardFlags
import PlugboardModel
import PlugboardStore
import Testing

@testable import PlugboardServer

/// A board in memory with a few flags in `default` and `production`, SDK tokens for both, a host token of `default`,
/// and a server over it.
struct ServerFixture {
    static let admin = try! Principal(osUser: "alice")
    static let features = """
        {"version": 1,
         "segments": [{"id": 1, "name": "beta", "constraints": [{"contextName": "appName", "operator": "IN", "values": ["beta-app"]}]}],
         "features": [
          {"name": "checkout.new-flow", "enabled": true, "strategies": [{"name": "default"}]},
          {"name": "checkout.off", "enabled": false, "strategies": [{"name": "default"}]},
          {"name": "beta.only", "enabled": true, "strategies": [{"name": "default", "segments": [1]}]},
          {"name": "banner.text", "enabled": true, "strategies": [{"name": "default"}],
           "variants": [{"name": "blue", "weight": 1000, "stickiness": "default", "payload": {"type": "string", "value": "Hello in blue"}}]}
         ]}
        """

    let board: Board
    let server: PlugboardServer
    let token: String
    let productionToken: String
    let revokedToken: String
    /// A token of `default` for plug-in hosts.
    let hostToken: String

    /// The fixture, with the board and the server reading the time from `clock`.
    init(maxBodyBytes: Int = 1 << 20, clock: TimeSource = .system) throws {
        board = try Board.inMemory(by: Self.admin, clock: clock)
        let set = try FeatureSet.decode(from: Data(Self.features.utf8))
        _ = try board.importFlags(set, environment: "default", by: Self.admin)
        _ = try board.importFlags(set, environment: "production", by: Self.admin)
        token = try board.createAPIToken(name: "app", environment: "default", by: Self.admin).secret
        productionToken = try board.createAPIToken(name: "prod", environment: "production", by: Self.admin).secret
        revokedToken = try board.createAPIToken(name: "old", environment: "default", by: Self.admin).secret
        _ = try board.revokeAPIToken("old", reason: "leaked", by: Self.admin)
        hostToken = try board.createAPIToken(name: "host", environment: "default", kind: .hosts, by: Self.admin).secret
        var configuration = ServerConfiguration(maxBodyBytes: maxBodyBytes)
        configuration.clock = clock
        server = PlugboardServer(board: board, configuration: configuration)
    }

    /// The stored credential of the token `name`, as a server checks it.
    func credential(_ name: String) throws -> APITokenCredential {
        try #require(try board.apiTokenCredentials().first { $0.name == name })
    }

    /// Runs `body` against the server's router (no sockets).
    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = try server.makeApplication()
        try await app.test(.router, body)
    }

    /// The body as a JSON object (empty when it is not one).
    static func json(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
    }

    /// The flag names of a features body (empty when it is not one).
    static func names(_ buffer: ByteBuffer) -> [String] {
        ((try? FeatureSet.decode(from: Data(buffer.readableBytesView)))?.features ?? []).map(\.name)
    }
}
