/// A parsed regular expression, after flags are applied: what Rust's regex calls the HIR.
///
/// Groups have disappeared (only a boolean "is there a match" is needed, so captures are not kept), literals under
/// `(?i)` are already sets of their case variants, and classes are already negated and folded. Greediness is not
/// kept either: it changes which match is found, never whether there is one.
indirect enum RegexNode: Sendable {
    /// Matches the empty string.
    case empty
    /// One code point.
    case scalar(UInt32)
    /// One code point of a set.
    case set(ScalarSet)
    /// A zero-width assertion.
    case assertion(RegexAssertion)
    case concatenation([RegexNode])
    case alternation([RegexNode])
    /// `node{min,max}`; `max == nil` means no upper bound.
    case repetition(RegexNode, min: Int, max: Int?)

    /// The same language with less program: a counted repetition of a star, `(x*){n,m}` with `m ≥ 1`, is `x*` (any
    /// string of `x*` is one copy plus empty ones, and `x*` is closed under concatenation). Only whether a pattern
    /// matches is computed, never captures, so groups do not matter. Without it, `(.*){1,1000}` compiles to
    /// thousands of instructions, and the Pike VM pays each of them for every input character (found by
    /// `Tools/Drills/drill stress`: seconds per thousand characters).
    func simplified() -> RegexNode {
        switch self {
        case .concatenation(let nodes): return .concatenation(nodes.map { $0.simplified() })
        case .alternation(let nodes): return .alternation(nodes.map { $0.simplified() })
        case .repetition(let node, let low, let high):
            let inner = node.simplified()
            if case .repetition(_, 0, nil) = inner, high.map({ $0 >= 1 }) ?? true { return inner }
            return .repetition(inner, min: low, max: high)
        default: return self
        }
    }

    /// The number of program instructions this node compiles to, saturating at `limit + 1`, computed without
    /// building anything, so that `((a{1000}){1000}){1000}` is refused at once.
    func programSize(limit: Int) -> Int {
        let over = limit + 1
        func add(_ a: Int, _ b: Int) -> Int { min(over, a + b) }
        func multiply(_ a: Int, _ b: Int) -> Int { a == 0 || b == 0 ? 0 : (a > over / b ? over : min(over, a * b)) }
        switch self {
        case .empty: return 0
        case .scalar, .set, .assertion: return 1
        case .concatenation(let nodes): return nodes.reduce(0) { add($0, $1.programSize(limit: limit)) }
        case .alternation(let nodes):
            return nodes.reduce(2 * (nodes.count - 1)) { add($0, $1.programSize(limit: limit)) }
        case .repetition(let node, let low, let high):
            let size = node.programSize(limit: limit)
            let required = multiply(low, size)
            guard let high else { return add(required, size + 2) }
            return add(required, multiply(high - low, size + 1))
        }
    }
}

/// A zero-width assertion, resolved for the flags in force (`^` under `(?m)` is `.startLine`, otherwise `.startText`).
enum RegexAssertion: UInt8, Sendable {
    /// `\A`, and `^` outside multi-line mode.
    case startText
    /// `\z`, and `$` outside multi-line mode (RE2's `$` does not match before a final newline).
    case endText
    /// `(?m)^`: at the start or after `\n`.
    case startLine
    /// `(?m)$`: at the end or before `\n`.
    case endLine
    /// `(?mR)^`: at the start, after `\n`, or after a `\r` that no `\n` follows.
    case startLineCRLF
    /// `(?mR)$`: at the end, before `\r`, or before a `\n` that no `\r` precedes.
    case endLineCRLF
    /// `\b`, `\B`, `\<` / `\b{start}`, `\>` / `\b{end}`, `\b{start-half}`, `\b{end-half}` with Unicode `\w`.
    case wordBoundary, notWordBoundary, wordStart, wordEnd, wordStartHalf, wordEndHalf
    /// The same with ASCII `\w`, in `(?-u)` mode.
    case asciiWordBoundary, asciiNotWordBoundary, asciiWordStart, asciiWordEnd, asciiWordStartHalf, asciiWordEndHalf
}

/// The inline flags of RE2 syntax: `i`, `m`, `s`, `U`, `u`, `R`, `x`.
struct RegexFlags: Sendable {
    var caseInsensitive = false
    var multiLine = false
    var dotMatchesNewline = false
    /// `U`: swaps greedy and lazy repetition, which does not change whether a pattern matches.
    var swapGreed = false
    var unicode = true
    /// `R`: `\r\n` line terminators for `^`, `$` and `.`.
    var crlf = false
    /// `x`: whitespace and `#` comments are ignored.
    var ignoreWhitespace = false
}
