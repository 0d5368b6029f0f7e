import Foundation
import HummingbirdTesting
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardServer

/// The controls of the plug-in and flag pages fit the state, as a person on call reads them: Kill while the plug-in
/// runs, Revive only while a kill switch covers it; a version chosen from the registered ones; an environment switcher.
@Suite("the console's controls fit the state", .timeLimit(.hangGuard))
struct ConsoleControlsTests {
    static let notes = "/ui/plugins/com.example.notes"

    /// ``ConsoleTests/Served`` with a second version, a second environment and a flag.
    static func served() throws -> ConsoleTests.Served {
        let served = try ConsoleTests.Served()
        let manifest = try PluginManifest.parse(
            Data(#"{"id": "com.example.notes", "name": "Notes", "version": "1.1.0", "host": ">=1.0.0"}"#.utf8))
        _ = try served.board.register(manifest, by: ConsoleTests.admin)
        _ = try served.board.setEnabled("com.example.notes", true, environment: "production", by: ConsoleTests.admin)
        _ = try served.board.createFlag("checkout.new-flow", by: ConsoleTests.admin)
        return served
    }

    /// The form of `operation` on the page, from its `<form` to its `</form>`.
    static func form(_ operation: String, in html: String) -> String? {
        guard let start = html.range(of: #"<form method="post" action="/ui/do/\#(operation)""#) else { return nil }
        guard let end = html[start.upperBound...].range(of: "</form>") else { return nil }
        return String(html[start.lowerBound..<end.upperBound])
    }

    @Test func killWhileItRunsReviveOnlyWhileKilled() async throws {
        let served = try Self.served()
        try await served.test { client in
            let cookie = try await ConsoleTests.signIn(client, served.writer)
            let running = try await ConsoleTests.page(client, Self.notes, cookie).1
            #expect(Self.form("plugin.kill", in: running) != nil)
            #expect(Self.form("plugin.revive", in: running) == nil, "Revive is offered while nothing is killed")

            _ = try served.board.kill(.plugin("com.example.notes"), reason: "INC-1", by: ConsoleTests.admin)
            let killed = try await ConsoleTests.page(client, Self.notes, cookie).1
            #expect(Self.form("plugin.kill", in: killed) == nil, "Kill is offered while the plug-in is killed")
            let revive = try #require(Self.form("plugin.revive", in: killed))
            #expect(revive.contains(#"<option value="" selected>"#) || revive.contains(#"<option value="">every version</option>"#))
            #expect(!revive.contains(#"value="1.0.0""#), "Revive offers a version no kill switch covers")
        }
    }

    @Test func aVersionKillIsRevivedByItsVersionAndOthersCanStillBeKilled() async throws {
        let served = try Self.served()
        _ = try served.board.kill(.version("com.example.notes", try SemanticVersion("1.1.0")), reason: "INC-2", by: ConsoleTests.admin)
        try await served.test { client in
            let cookie = try await ConsoleTests.signIn(client, served.writer)
            let html = try await ConsoleTests.page(client, Self.notes, cookie).1
            let revive = try #require(Self.form("plugin.revive", in: html))
            #expect(revive.contains(#"<option value="1.1.0">1.1.0</option>"#) && !revive.contains("every version"))
            let kill = try #require(Self.form("plugin.kill", in: html))
            #expect(kill.contains(#"<option value="1.0.0">1.0.0</option>"#) && !kill.contains(#"value="1.1.0""#))
        }
    }

    @Test func aVersionIsChosenFromTheRegisteredOnes() async throws {
        let served = try Self.served()
        try await served.test { client in
            let cookie = try await ConsoleTests.signIn(client, served.writer)
            let html = try await ConsoleTests.page(client, Self.notes, cookie).1
            for operation in ["plugin.pin", "plugin.yank", "plugin.kill"] {
                let form = try #require(Self.form(operation, in: html), "\(operation)")
                #expect(form.contains(#"<select id="\#(operation)-version-"#), "\(operation) asks for a version as text")
                #expect(!form.contains(#"name="version" type="text""#), "\(operation)")
                #expect(form.contains(#"<option value="1.1.0""#) && form.contains(#"<option value="1.0.0""#), "\(operation)")
            }
        }
    }

    @Test func thePluginAndFlagPagesSwitchEnvironments() async throws {
        let served = try Self.served()
        try await served.test { client in
            let cookie = try await ConsoleTests.signIn(client, served.writer)
            for (path, own) in [
                (Self.notes + "?env=production", Self.notes), ("/ui/flags/checkout.new-flow?env=production", "/ui/flags/checkout.new-flow"),
            ] {
                let html = try await ConsoleTests.page(client, path, cookie).1
                #expect(html.contains(#"<form method="get" action="\#(own)" class="filters">"#), "\(path)")
                #expect(
                    html.contains("<option selected>production</option>") && html.contains("<option>default</option>"),
                    "\(path): \(html.components(separatedBy: "<select").dropFirst().first?.prefix(300) ?? "")")
                #expect(html.contains("In production"), "\(path)")
            }
        }
    }
}
