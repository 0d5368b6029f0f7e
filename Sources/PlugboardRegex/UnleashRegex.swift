/// A regular expression with the semantics of Unleash's engine (Rust's `regex` crate, RE2 syntax), run by this
/// module's own linear-time engine.
///
/// The pattern is parsed as Rust's regex parses it (`RegexParser`), compiled to a Thompson NFA (`RegexProgram`) once,
/// when the flag snapshot is compiled, and run by a Pike VM (`RegexProgram.run`): the time of a match is linear in
/// the length of the value times the size of the program, so no pattern can backtrack catastrophically (`(a+)+$`,
/// `(.*a){20}`). Matching is thread-safe and allocates nothing on the heap for ordinary patterns.
///
/// What Unleash's engine refuses is refused at import, with a readable reason: look-around, back-references, atomic
/// groups, `\Z`, `\G`, `\Q…\E`, comments `(?#…)`, unknown escapes and flags, repeated flags, a dangling `-` in flags,
/// class escapes as range ends (`[\d-z]`), backwards ranges, `{,n}`, and in `(?-u)` mode Unicode classes and anything
/// that could match invalid UTF-8 (`.`, `\W`, negated classes). As RE2 does, repetition counts over 1,000 are refused
/// (`a{1001}`), and so is a pattern whose program would have over `RegexProgram.instructionLimit` (100,000)
/// instructions (`((a{1000}){1000}){1000}`; Rust's default limit is 10 MB of compiled program).
///
/// Semantics, as in Rust's regex: `(?P<name>…)` and `(?<name>…)` groups; POSIX classes `[[:alpha:]]` are ASCII-only;
/// `\d`, `\w`, `\s`, `\b` are Unicode-aware unless `(?-u)`; `\pL`, `\p{Greek}`, `\p{sc=Greek}`, `\p{Emoji}` with
/// Rust's loose name matching; `\v` is the vertical tab; `\x{…}`, `\u…`, `\U…`; `\<`, `\>`, `\b{start}`, `\b{end}`,
/// `\b{start-half}`, `\b{end-half}`; `$` matches only at the very end outside multi-line mode; `a++` is `(a+)+`;
/// `(?i)` uses simple case folding (`ß` does not match `SS`, `k` matches `K`, the Kelvin sign); `.` excludes only `\n`
/// (and `\r` under `R`); flags `i m s U u x R`. A match anywhere in the value counts (`is_match`), as in Unleash.
/// A differential test compares over 200 patterns with Unleash's engine.
public struct UnleashRegex: Sendable {
    private let program: RegexProgram

    /// Compiles `pattern`; throws a readable message when Unleash's engine would refuse it, or it is too large.
    ///
    /// - Parameters:
    ///   - pattern: The regular expression, in the syntax of Rust's regex crate.
    ///   - caseInsensitive: Matches as if the pattern began with `(?i)`.
    /// - Throws: ``RegexError``, whose message names the pattern and what is wrong with it.
    public init(_ pattern: String, caseInsensitive: Bool) throws(RegexError) {
        let node = try RegexParser.parse(pattern, caseInsensitive: caseInsensitive)
        program = try RegexProgram.compile(node, pattern: pattern)
    }

    /// Whether the pattern matches anywhere in `text`.
    public func matches(_ text: String) -> Bool { program.matches(text) }

    /// Whether the pattern runs as a deterministic automaton (it is small enough) rather than the Pike VM.
    var hasAutomaton: Bool { program.dfa != nil }

    /// The automaton's tables as a plain value (valid while this regex lives), for callers that keep the regex;
    /// `nil` when the pattern is too large for one and runs on the Pike VM.
    public var automaton: RegexAutomaton? { program.dfa?.automaton }

    /// Matches with the Pike VM and reports the engine's work, for tests that check it is linear.
    func run(_ text: String) -> RegexProgram.Run { program.run(text) }

    /// The number of instructions of the compiled program.
    var programSize: Int { program.instructions.count }
}
