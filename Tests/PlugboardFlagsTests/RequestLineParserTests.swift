import Foundation
import PlugboardTestSupport
import Testing

@testable import PlugboardFlags

/// `flag evaluate`'s fast reader of input lines against `JSONDecoder`, which it must agree with.
@Suite("Request lines", .timeLimit(.hangGuard))
struct RequestLineParserTests {
    @Test("the fast reader of request lines agrees with JSONDecoder, and leaves unusual lines to it")
    func requestLines() throws {
        struct Request: Decodable {
            let toggle: String
            let context: UnleashContext?
        }
        let lines = [
            #"{"toggle":"a"}"#, #" { "toggle" : "a" , "context" : null } "#, #"{"context":{},"toggle":"a"}"#,
            #"{"toggle":"a","context":{"userId":"u1","sessionId":null,"properties":{"tenant":"acme","x":null}}}"#,
            #"{"toggle":"a","context":{"tenant":"top","properties":{"tenant":"inner"},"appName":"web"}}"#,
            #"{"toggle":"\u00e9\"\\\/\b\f\n\r\t\ud83d\ude00","context":{"currentTime":"2024-01-01T00:00:00Z"}}"#,
            #"{"toggle":"a","other":"ignored","context":{"remoteAddress":"10.0.0.1","environment":"prod"}}"#,
            "{\"toggle\":\"é😀\",\"context\":{\"userId\":\"ü\"}}",
        ]
        for line in lines {
            let fast = try #require(RequestLineParser.parse(line), "\(line)")
            let slow = try JSONDecoder().decode(Request.self, from: Data(line.utf8))
            #expect(fast.toggle == slow.toggle && fast.context == slow.context, "\(line)")
        }
        for unusual in [
            #"{"toggle":"a","context":{"userId":7}}"#, #"{"toggle":"a","toggle":"b"}"#, #"{"toggle":"a","x":[1]}"#,
            #"{"toggle":"a","context":{"properties":{"n":1}}}"#, #"{"toggle":"\ud800"}"#, #"{"toggle":"a"} x"#, "[1,2]",
            #"{"toggle":"a","#, #"{"context":{}}"#, "{\"toggle\":\"a\u{1}\"}", #"{"toggle":"a","context":{"flag":true}}"#,
        ] {
            #expect(RequestLineParser.parse(unusual) == nil, "\(unusual)")
        }
    }
}
