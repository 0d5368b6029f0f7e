import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

/// A key twice in one object is found wherever it is, after escapes are decoded, and named with where its object is;
/// strings that hold quotes, backslashes or braces do not mislead the scan.
@Suite("duplicate JSON keys", .timeLimit(.hangGuard))
struct DuplicateKeysTests {
    static func first(_ text: String) -> String? {
        DuplicateKeys.first(in: Data(text.utf8)).map { "\($0.key) at \($0.location)" }
    }

    @Test func aKeyTwiceIsNamedWithItsObjectsLocation() {
        #expect(Self.first(#"{"id": 1, "id": 2}"#) == "id at $")
        #expect(Self.first(#"{"id": 1, "\u0069d": 2}"#) == "id at $")
        #expect(Self.first(#"{"a": {"b": [1, {"c": {"k": 1, "k": 2}}]}}"#) == "k at $.a.b[1].c")
        #expect(Self.first(#"{"features": [{"x": 1}, {"x": 1, "y": [], "x": 2}]}"#) == "x at $.features[1]")
        #expect(Self.first(#"{"ünï": 1, "ünï": 2}"#) == "ünï at $")
    }

    @Test func equalKeysInDifferentObjectsAndTrickyStringsAreNotDuplicates() {
        #expect(Self.first(#"{"a": {"k": 1}, "b": {"k": 1}, "k": [{"k": 1}, {"k": 2}]}"#) == nil)
        #expect(Self.first(#"{"s": "a \"quoted\" } ] , \\", "t": "\\\"", "k\"": 1, "k": 2}"#) == nil)
        #expect(Self.first(#"{"k\\": 1, "k": 2, "x": "k"}"#) == nil)
        #expect(Self.first(#"{"a\nb": 1, "a\u000ab": 2}"#) == "a\nb at $")
        #expect(Self.first(#"[1, true, null, -2.5e3, "s"]"#) == nil)
    }
}
