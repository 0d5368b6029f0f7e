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

/// What SDKs and hosts report is bounded in memory and on disk, and every drop is counted where people look.
@Suite("telemetry bounds", .timeLimit(.hangGuard))
struct TelemetryBoundsTests {
    @Test func usageOfFlagsTheBoardDoesNotHaveIsDroppedAndCounted() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let metrics = #"""
                {"appName":"shop","instanceId":"shop-1","bucket":{"toggles":{"checkout.new-flow":{"yes":1,"no":0},
                 "invented.1":{"yes":1,"no":0},"invented.2":{"yes":5,"no":0}}}}
                """#
            try await client.execute(
                uri: "/api/client/metrics", method: .post, headers: [.authorization: fixture.token], body: ByteBuffer(string: metrics)
            ) { response in #expect(response.status == .accepted) }
        }
        fixture.server.flushUsage()
        #expect(try fixture.board.flagUsage("checkout.new-flow").first?.yes == 1)
        #expect(try fixture.board.flagUsage("invented.1").isEmpty)
        let drop = try #require(try fixture.board.telemetryDrops().first { $0.kind == TelemetryDrop.Kind.unknownFlag })
        #expect(drop.count == 2)
    }

    @Test func aTokenNamesAtMostItsLimitOfApplicationsAndInstances() throws {
        let fixture = try ServerFixture()
        let usage = fixture.server.usage
        for app in 0..<(UsageBuffer.applicationsPerToken + 5) {
            usage.register(ClientRegistration(appName: "app-\(app)", instanceID: "1", environment: "default", tokenName: "app"))
        }
        for instance in 0..<(UsageBuffer.instancesPerToken + 3) {
            usage.register(ClientRegistration(appName: "other", instanceID: "i-\(instance)", environment: "default", tokenName: "prod"))
        }
        fixture.server.flushUsage()
        let instances = try fixture.board.clientInstances()
        #expect(Set(instances.filter { $0.tokenName == "app" }.map(\.appName)).count == UsageBuffer.applicationsPerToken)
        #expect(instances.filter { $0.tokenName == "prod" }.count == UsageBuffer.instancesPerToken)
        let drops = Dictionary(uniqueKeysWithValues: try fixture.board.telemetryDrops().map { ($0.kind, $0.count) })
        #expect(drops[TelemetryDrop.Kind.applicationsOverCap] == 5)
        #expect(drops[TelemetryDrop.Kind.instancesOverCap] == 3)
    }

    @Test func aTokenReportsForAtMostItsLimitOfHostIds() throws {
        let fixture = try ServerFixture()
        let usage = fixture.server.usage
        var refused = 0
        for host in 0..<(UsageBuffer.hostsPerToken + 7) {
            do {
                try usage.report(
                    LoadReport(
                        hostID: "h-\(host)", environment: "default", hostVersion: "1", entries: [], source: nil, reporter: "token:app"),
                    token: "app")
            } catch {
                refused += 1
            }
        }
        #expect(refused == 7)
        fixture.server.flushUsage()
        #expect(try fixture.board.telemetryDrops().first { $0.kind == TelemetryDrop.Kind.hostsOverCap }?.count == 7)
    }

    @Test func reportsAreStoredInBatchesAndKeepTheirLimitOfEntries() async throws {
        let fixture = try ServerFixture()
        let entries = (0..<(TelemetryLimits.maxEntriesPerReport + 10)).map { #"{"pluginID":"com.example.p\#($0)","state":"loaded"}"# }
        let body = #"{"hostId":"remote-1","hostVersion":"1.0.0","entries":[\#(entries.joined(separator: ","))]}"#
        try await fixture.test { client in
            try await client.execute(
                uri: "/api/host/report", method: .post, headers: [.authorization: fixture.hostToken], body: ByteBuffer(string: body)
            ) { response in #expect(response.status == .accepted) }
        }
        fixture.server.flushUsage()
        #expect(try fixture.board.loadStatus().count == TelemetryLimits.maxEntriesPerReport)
        #expect(try fixture.board.telemetryDrops().first { $0.kind == TelemetryDrop.Kind.reportEntriesOverCap }?.count == 10)
    }

    @Test func aRefusedRequestWithABodyClosesTheConnection() async throws {
        let fixture = try ServerFixture(maxBodyBytes: 1024)
        try await fixture.test { client in
            try await client.execute(
                uri: "/api/client/metrics", method: .post, headers: [:], body: ByteBuffer(repeating: 0x41, count: 4096)
            ) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.connection] == "close")
            }
            try await client.execute(
                uri: "/api/client/register", method: .post, headers: [.authorization: fixture.token, .contentLength: "4096"],
                body: ByteBuffer(repeating: 0x41, count: 4096)
            ) { response in
                #expect(response.status == .contentTooLarge)
                #expect(response.headers[.connection] == "close")
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.connection] == nil)
            }
        }
    }

    @Test func aSnapshotNamesAtMostItsLimitOfPlugins() async throws {
        let fixture = try ServerFixture()
        let many = (0...HostRoutes.pluginLimit).map { "plugin=com.example.p\($0)" }.joined(separator: "&")
        try await fixture.test { client in
            try await client.execute(uri: "/api/host/snapshot?\(many)", method: .get, headers: [.authorization: fixture.hostToken]) {
                response in
                #expect(response.status == .badRequest)
            }
            try await client.execute(
                uri: "/api/host/snapshot?plugin=com.example.a", method: .get, headers: [.authorization: fixture.hostToken]
            ) { response in #expect(response.status == .ok) }
        }
    }

    @Test func aFullComputeLimitRefusesInsteadOfQueueingWithoutBound() async throws {
        let limit = ConcurrencyLimit(width: 1, queueLimit: 0)
        let first = try #require(await limit.enter())
        #expect(await limit.enter() == nil)
        first.leave()
        let again = await limit.enter()
        #expect(again != nil)
        again?.leave()
    }
}
