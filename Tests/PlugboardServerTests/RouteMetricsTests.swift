import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// `/metrics` counts requests by the route's pattern as the router matched it: one label per route, whatever the path's
/// parameters, and `other` for a request no route matched.
@Suite("requests counted by route", .timeLimit(.hangGuard))
struct RouteMetricsTests {
    @Test func requestsAreCountedByTheRoutesPatternAndOtherWhenNoRouteMatched() async throws {
        let served = try OperationsLaneTests.Served()
        let apiToken = try served.board.createAPIToken(name: "hosts", environment: "default", kind: .hosts, by: OperationsLaneTests.admin)
        let app = try served.server.makeApplication()
        try await app.test(.router) { client in
            for sha256 in [String(repeating: "a", count: 64), String(repeating: "b", count: 64)] {
                try await client.execute(
                    uri: "/api/host/artifacts/\(sha256)", method: .get, headers: [.authorization: apiToken.secret]
                ) { response in #expect(response.status == .notFound) }
            }
            try await client.execute(
                uri: "/api/admin/plugin.show", method: .post, headers: [.authorization: "Bearer \(served.laptop.secret)"],
                body: ByteBuffer(string: #"{"id": "com.example.unknown"}"#)
            ) { response in #expect(response.status == .notFound) }
            try await client.execute(uri: "/api/admin/whoami", method: .get) { response in #expect(response.status == .unauthorized) }
            try await client.execute(uri: "/nowhere/\(UUID())", method: .get) { response in #expect(response.status == .notFound) }
            try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: apiToken.secret]) { _ in }
            try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: apiToken.secret]) { response in
                let text = String(buffer: response.body)
                for line in [
                    #"plugboard_http_requests_total{route="/metrics",status="200"} 1"#,
                    #"plugboard_http_requests_total{route="/api/host/artifacts/{sha256}",status="404"} 2"#,
                    #"plugboard_http_requests_total{route="/api/admin/plugin.show",status="404"} 1"#,
                    #"plugboard_http_requests_total{route="/api/admin/whoami",status="401"} 1"#,
                    #"plugboard_http_requests_total{route="other",status="404"} 1"#,
                ] {
                    #expect(text.contains(line), "\(line)\n\(text)")
                }
            }
        }
    }
}
