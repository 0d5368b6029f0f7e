import Crypto
import Foundation
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardRemoteHost
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Testing

/// The host checks signatures before any code loads, compiled-in plug-ins included, as the environment's policy says.
@Suite("host runtime: signed releases", .timeLimit(.hangGuard))
struct HostSignatureTests {
    static let key = Curve25519.Signing.PrivateKey()
    static var publicKey: String { key.publicKey.rawRepresentation.base64EncodedString() }
    static var keyID: String { SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation) }

    /// A board with com.example.signed@1.0.0 (signed by ``key``, trusted) and com.example.unsigned@1.0.0, both
    /// enabled, under `policy` in `default`.
    func board(_ policy: SignaturePolicy, trust: Bool = true) throws -> TestBoard {
        let t = try TestBoard()
        let manifest = try PluginManifest.parse(Data(#"{"id":"com.example.signed","name":"Signed","version":"1.0.0"}"#.utf8))
        let signature = try ReleaseSignature.sign(ReleaseStatement(manifest: manifest, artifactSHA256: nil), with: Self.key)
        _ = try t.board.register(manifest, signatures: [signature], by: TestBoard.admin)
        _ = try t.board.setEnabled("com.example.signed", true, environment: "default", by: TestBoard.admin)
        try t.register("com.example.unsigned", "1.0.0")
        if trust { _ = try t.board.addSigner(pluginID: "com.example.signed", publicKey: Self.publicKey, by: TestBoard.admin) }
        _ = try t.board.setSignaturePolicy(policy, environment: "default", by: TestBoard.admin)
        return t
    }

    func host(_ t: TestBoard) -> PluginHost {
        t.host(compiledIn: ["com.example.signed", "com.example.unsigned"])
    }

    func status(_ host: PluginHost, _ id: String) -> LoadReportEntry? {
        host.status.first { $0.pluginID == id }
    }

    @Test(arguments: HostSourceKind.allCases) func underRequireOnlyTheSignedReleaseLoads(kind: HostSourceKind) async throws {
        let t = try board(.require)
        let host = try await t.host(kind, compiledIn: ["com.example.signed", "com.example.unsigned"])
        await host.start()
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.signed"])
        let unsigned = status(host, "com.example.unsigned")
        #expect(unsigned?.reasonCode == "unsigned")
        #expect(unsigned?.reason == "com.example.unsigned@1.0.0 is not signed; default requires a valid signature by a trusted key")
        #expect(try await t.loadStatus(pluginID: "com.example.signed") { !$0.isEmpty }.first?.signature == .valid)
        await host.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func underOffNothingIsChecked(kind: HostSourceKind) async throws {
        let t = try board(.off, trust: false)
        let host = try await t.host(kind, compiledIn: ["com.example.signed", "com.example.unsigned"])
        await host.start()
        #expect(host.activePlugins.map(\.pluginID).sorted() == ["com.example.signed", "com.example.unsigned"])
        #expect(host.status.allSatisfy { $0.warning == nil })
        await host.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func underWarnEverythingLoadsAndTheProblemIsReported(kind: HostSourceKind) async throws {
        let t = try board(.warn, trust: false)
        let host = try await t.host(kind, compiledIn: ["com.example.signed", "com.example.unsigned"])
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.map(\.pluginID).sorted() == ["com.example.signed", "com.example.unsigned"])
        #expect(status(host, "com.example.unsigned")?.warning?.hasPrefix("unsigned: com.example.unsigned@1.0.0 is not signed") == true)
        #expect(status(host, "com.example.signed")?.warning?.hasPrefix("untrusted_signer: ") == true, "\(host.status)")
        let stored = try await t.loadStatus(pluginID: "com.example.unsigned") { !$0.isEmpty }.first
        #expect(
            stored?.state == .loaded && stored?.warning?.contains("default warns about signatures") == true, "\(String(describing: stored))"
        )
        await host.stop()
        var warnings: [String] = []
        for await event in events { if case .warning(let message) = event { warnings.append(message) } }
        #expect(warnings.contains { $0.contains("loaded com.example.unsigned@1.0.0 despite: ") }, "\(warnings)")
    }

    @Test(arguments: HostSourceKind.allCases) func anUntrustedSignerIsNamed(kind: HostSourceKind) async throws {
        let t = try board(.require, trust: false)
        let host = try await t.host(kind, compiledIn: ["com.example.signed", "com.example.unsigned"])
        await host.start()
        #expect(host.activePlugins.isEmpty)
        let signed = status(host, "com.example.signed")
        #expect(signed?.reasonCode == "untrusted_signer")
        #expect(signed?.reason?.contains("signed by key \(Self.keyID), which is not trusted for com.example.signed") == true)
        await host.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func aKeyRevokedAfterSigningStopsTheRunningRelease(kind: HostSourceKind) async throws {
        try await onHighPriority {
            let t = try board(.require)
            let host = try await t.host(kind, compiledIn: ["com.example.signed", "com.example.unsigned"])
            let events = host.events()
            await host.start()
            #expect(host.activePlugins.map(\.pluginID) == ["com.example.signed"])
            _ = try Board.open(at: t.board.path).revokeSigner(keyID: Self.keyID, reason: "INC-77: key leaked", by: TestBoard.admin)
            // Waits for the deactivation, looking at the clock whether or not events come (a loop that looked only when an
            // event came waited as long as none did); the deadline is a guard against hanging, not a measurement.
            // Every event is kept, for the failure message.
            let deactivated = Task {
                var seen: [HostEvent] = []
                for await event in events {
                    seen.append(event)
                    if case .deactivated(let id, _, _) = event, id == "com.example.signed" { return (true, seen) }
                }
                return (false, seen)
            }
            // Ten minutes: the whole suite runs at once, and on a busy 2-core machine it takes about six.
            // Detached from lookups first, its state recorded once its deactivate() returned: wait for both.
            try await eventually("\(kind): the host to stop the plug-in of the revoked signer (\(host.status))") {
                host.activePlugins.isEmpty && status(host, "com.example.signed")?.reasonCode == "revoked_signer"
            }
            let signed = status(host, "com.example.signed")
            #expect(signed?.reasonCode == "revoked_signer")
            #expect(signed?.reason?.contains("which was revoked (INC-77: key leaked)") == true, "\(signed?.reason ?? "")")
            await host.stop()
            let (announced, seen) = await deactivated.value
            #expect(announced, "the deactivation was announced as an event: \(seen)")
        }
    }

    @Test func aReleaseTrustedOnlyThroughAnUnauditedSignerRowIsRefused() async throws {
        let t = try board(.require, trust: false)
        try await BoardSQL(t.board.path).execute(
            "INSERT INTO signers VALUES (?, 'com.example.signed', ?, 'mallory', '2026-01-01T00:00:00.000Z', 'mallory')", .text(Self.keyID),
            .text(Self.publicKey))
        #expect(try t.board.signatureVerdict(pluginID: "com.example.signed", version: "1.0.0")?.state == .valid)
        let host = host(t)
        await host.start()
        #expect(host.activePlugins.isEmpty)
        let signed = status(host, "com.example.signed")
        #expect(signed?.reasonCode == "unproven_state")
        #expect(
            signed?.reason?.hasPrefix("signers: row \(Self.keyID)/com.example.signed was added without an audit row") == true,
            "\(signed?.reason ?? "")")
        await host.stop()
    }
}
