import Foundation
import PlugboardTestSupport
import Testing

/// A board admin cannot aim the server at this machine, the private network or the cloud's metadata service through
/// the operations API: an endpoint's URL written with such an address is refused unless `serve` runs with
/// `--webhook-allow-private`, and a link-local one always.
@Suite("webhook URLs through the operations API (processes)", .timeLimit(.hangGuard))
struct WebhookAddressTests {
    static let hostile = [
        "http://127.0.0.1:9/hook", "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/hook", "http://[::1]:9/hook",
        "http://[::ffff:169.254.169.254]/x",
    ]

    @Test func privateAndMetadataAddressesAreRefusedWithoutTheFlag() async throws {
        let sandbox = try await Sandbox.withBoard()
        let served = try await OperationsAPITests.serve(sandbox)
        for (index, url) in Self.hostile.enumerated() {
            let refused = try await served.run(["webhook", "add", "evil\(index)", url])
            #expect(refused.status != 0 && refused.stderr.contains("does not send to"), "\(url): \(refused)")
        }
        #expect(try await served.run(["webhook", "list"]).stdout.contains("No webhooks"))
        await served.stop()
    }

    @Test func theFlagAllowsPrivateAddressesButNeverTheMetadataService() async throws {
        let sandbox = try await Sandbox.withBoard()
        let served = try await OperationsAPITests.serve(sandbox, options: ["--webhook-allow-private"])
        let added = try await served.run(["webhook", "add", "internal", "http://10.1.2.3/hook"])
        #expect(added.status == 0, "\(added)")
        for url in ["http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/x"] {
            let refused = try await served.run(["webhook", "add", "metadata", url])
            #expect(refused.status != 0 && refused.stderr.contains("link-local"), "\(url): \(refused)")
        }
        await served.stop()
    }
}
