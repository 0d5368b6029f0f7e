import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

@testable import PlugboardMacrosPlugin

@Suite("@MemberwiseInit writes the initializer Swift would, at the access level given", .timeLimit(.minutes(10)))
struct MemberwiseInitTests {
    let macros: [String: MacroSpec] = [
        "MemberwiseInit": MacroSpec(type: MemberwiseInitMacro.self), "InitDefault": MacroSpec(type: InitDefaultMacro.self),
    ]

    func expect(_ source: String, expands expected: String, diagnostics: [DiagnosticSpec] = [], line: Int = #line) {
        assertMacroExpansion(
            source, expandedSource: expected, diagnostics: diagnostics, macroSpecs: macros,
            failureHandler: {
                Issue.record("\($0.message)", sourceLocation: SourceLocation(fileID: #fileID, filePath: #filePath, line: line, column: 1))
            })
    }

    @Test("one labelled parameter a stored property, in order; computed, static and set lets left out")
    func storedPropertiesInOrder() {
        expect(
            """
            @MemberwiseInit(.public)
            public struct Token {
                public static let prefix = "pb_"
                public let name: String
                public let kind = "sdk"
                public let expiresAt: Date?
                public var uses: Int = 0
                public var note: String?
                public var label: String { name }
                public var seen: Bool { didSet { } }
            }
            """,
            expands: """
                public struct Token {
                    public static let prefix = "pb_"
                    public let name: String
                    public let kind = "sdk"
                    public let expiresAt: Date?
                    public var uses: Int = 0
                    public var note: String?
                    public var label: String { name }
                    public var seen: Bool { didSet { } }

                    /// A value with each stored property given.
                    public init(name: String, expiresAt: Date?, uses: Int = 0, note: String? = nil, seen: Bool) {
                        self.name = name
                        self.expiresAt = expiresAt
                        self.uses = uses
                        self.note = note
                        self.seen = seen
                    }
                }
                """)
    }

    @Test("@InitDefault gives a let its default; package and internal access as asked")
    func defaultsAndAccess() {
        expect(
            """
            @MemberwiseInit(.package)
            struct Policy {
                @InitDefault("default") let approvers: String
                @InitDefault(nil) let token: String?
            }
            """,
            expands: """
                struct Policy {
                    let approvers: String
                    let token: String?

                    /// A value with each stored property given.
                    package init(approvers: String = "default", token: String? = nil) {
                        self.approvers = approvers
                        self.token = token
                    }
                }
                """)
        expect(
            "@MemberwiseInit\nstruct Pair {\n    let a: Int, b: Int\n}",
            expands: """
                struct Pair {
                    let a: Int, b: Int

                    /// A value with each stored property given.
                    init(a: Int, b: Int) {
                        self.a = a
                        self.b = b
                    }
                }
                """)
    }

    @Test("a class, or a property without a written type, is refused with one sentence")
    func refusals() {
        expect(
            "@MemberwiseInit\nclass Box {\n    let a: Int\n}",
            expands: "class Box {\n    let a: Int\n}",
            diagnostics: [DiagnosticSpec(message: "@MemberwiseInit applies to a struct", line: 1, column: 1)])
        expect(
            "@MemberwiseInit\nstruct Box {\n    var a = 1\n    var b\n}",
            expands: "struct Box {\n    var a = 1\n    var b\n}",
            diagnostics: [DiagnosticSpec(message: "@MemberwiseInit needs the type of a written out", line: 1, column: 1)])
    }
}
