import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PlugboardFlags
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// Links of the console to the page of a name: one percent-encoded path segment, escaped for HTML, whatever the name.
@Suite("the console's links", .timeLimit(.hangGuard))
struct ConsoleLinkTests {
    @Test func aFlagWhoseNameHoldsQuotesAndQueryCharactersGetsAWorkingLink() async throws {
        let served = try ConsoleTests.Served()
        let name = #"we"ird<flag?x#y/z%25"#
        let set = try FeatureSet.decode(
            from: Data(
                #"{"version": 1, "features": [{"name": "we\"ird<flag?x#y/z%25", "enabled": true, "strategies": [{"name": "default"}]}]}"#
                    .utf8))
        _ = try served.board.importFlags(set, environment: "default", by: ConsoleTests.admin)
        try await served.test { client in
            let cookie = try await ConsoleTests.signIn(client, served.writer)
            let (status, list) = try await ConsoleTests.page(client, "/ui/flags?env=default", cookie)
            #expect(status == .ok)
            let link = "/ui/flags/we%22ird%3Cflag%3Fx%23y%2Fz%2525?env=default"
            #expect(list.contains(#"<a href="\#(link)">we&quot;ird&lt;flag?x#y/z%25</a>"#), "\(list)")
            let (opened, page) = try await ConsoleTests.page(client, link, cookie)
            #expect(opened == .ok, "\(page)")
            #expect(page.contains("<title>we&quot;ird&lt;flag?x#y/z%25 · Plugboard</title>"), "\(page)")
            // The page's forms name the flag itself, so that a change made there changes this flag.
            let off = try await ConsoleTests.post(
                client, "/ui/do/flag.disable", cookie,
                ["csrf": try ConsoleTests.csrf(page), "name": name, "env": "default", "return": link])
            #expect(off.status == .seeOther && off.headers[.location] == link, "\(String(buffer: off.body))")
        }
        #expect(try served.board.featureSet(environment: "default").features.first { $0.name == name }?.enabled == false)
    }

    @Test func everyNameIsOnePercentEncodedPathSegment() {
        #expect(ConsolePages.link("/ui/plugins", "com.example.notes", env: "default") == "/ui/plugins/com.example.notes?env=default")
        #expect(ConsolePages.link("/ui/flags", "a/b?c#d\"e<f>g é") == "/ui/flags/a%2Fb%3Fc%23d%22e%3Cf%3Eg%20%C3%A9")
    }
}
