/// Parses RE2 syntax, as Rust's regex crate (Unleash's engine) reads it, into a `RegexNode`.
///
/// The structure follows the crate's `regex-syntax` parser and translator closely, so that the same patterns are
/// refused for the same reasons: look-around, back-references, unknown escapes and flags, repeated flags, a dangling
/// `-` in flags, `{,n}`, backwards ranges, class escapes as range ends, Unicode classes and anything that could match
/// invalid UTF-8 in `(?-u)` mode. Flags are applied while parsing: case-insensitive literals become sets of their
/// simple case folding, classes are folded then negated, `^`/`$`/`.` and word boundaries take their mode.
/// Counted repetitions over 1,000 are refused, as RE2 does.
struct RegexParser {
    /// RE2's largest repetition count.
    static let maximumRepetition = 1000
    /// How deeply groups and classes may nest (Rust's default nest limit).
    static let nestLimit = 250

    let pattern: String
    let chars: [Unicode.Scalar]
    var index = 0
    var flags = RegexFlags()
    var depth = 0
    var captureNames: Set<String> = []

    init(_ pattern: String, caseInsensitive: Bool) {
        self.pattern = pattern
        chars = Array(pattern.unicodeScalars)
        flags.caseInsensitive = caseInsensitive
    }

    /// Parses the whole pattern.
    static func parse(_ pattern: String, caseInsensitive: Bool) throws(RegexError) -> RegexNode {
        var parser = RegexParser(pattern, caseInsensitive: caseInsensitive)
        let node = try parser.parseAlternation()
        if !parser.isEOF { throw parser.fail("a ')' closes a group that was not opened") }
        return node
    }

    func fail(_ why: String) -> RegexError {
        RegexError("'\(pattern)' is not a valid regular expression: \(why)")
    }

    // MARK: - Cursor

    var isEOF: Bool { index >= chars.count }
    /// The current character; only read when not at the end.
    var char: Unicode.Scalar { chars[index] }
    func peek(_ offset: Int = 1) -> Unicode.Scalar? { index + offset < chars.count ? chars[index + offset] : nil }

    /// Whether the text at the cursor starts with `prefix`; if so, moves past it.
    mutating func bumpIf(_ prefix: String) -> Bool {
        let scalars = Array(prefix.unicodeScalars)
        guard index + scalars.count <= chars.count, Array(chars[index..<(index + scalars.count)]) == scalars else { return false }
        index += scalars.count
        return true
    }

    /// In `x` mode, skips whitespace and `#` comments.
    mutating func skipSpace() {
        guard flags.ignoreWhitespace else { return }
        while !isEOF {
            if char.properties.isWhitespace {
                index += 1
            } else if char == "#" {
                while !isEOF, char != "\n" { index += 1 }
                if !isEOF { index += 1 }
            } else {
                return
            }
        }
    }

    /// Moves one character on, then skips space in `x` mode; whether anything is left.
    mutating func bumpAndSkipSpace() -> Bool {
        index += 1
        skipSpace()
        return !isEOF
    }

    /// The character after the current one, skipping space in `x` mode.
    func peekSkippingSpace() -> Unicode.Scalar? {
        var copy = self
        guard copy.bumpAndSkipSpace() else { return nil }
        return copy.char
    }

    // MARK: - Structure

    mutating func parseAlternation() throws(RegexError) -> RegexNode {
        var branches: [RegexNode] = []
        while true {
            branches.append(try parseConcatenation())
            guard !isEOF, char == "|" else { break }
            index += 1
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    mutating func parseConcatenation() throws(RegexError) -> RegexNode {
        var items: [RegexNode] = []
        // False at the start and right after a flag group: nothing there can be repeated.
        var canRepeat = false
        while true {
            skipSpace()
            if isEOF { break }
            switch char {
            case "|", ")":
                return Self.concatenation(items)
            case "(":
                if let group = try parseGroup() {
                    items.append(group)
                    canRepeat = true
                } else {
                    canRepeat = false
                }
            case "[":
                items.append(try parseBracketedClass())
                canRepeat = true
            case "?", "*", "+":
                let operation = char
                guard canRepeat, let last = items.popLast() else { throw fail("a repetition operator has nothing to repeat") }
                if bumpAndSkipSpace(), char == "?" { index += 1 }  // lazy: the same answer for is-match
                switch operation {
                case "?": items.append(.repetition(last, min: 0, max: 1))
                case "*": items.append(.repetition(last, min: 0, max: nil))
                default: items.append(.repetition(last, min: 1, max: nil))
                }
            case "{":
                guard canRepeat, let last = items.popLast() else { throw fail("a repetition operator has nothing to repeat") }
                let (low, high) = try parseCountedRepetition()
                items.append(.repetition(last, min: low, max: high))
            default:
                items.append(try parsePrimitive())
                canRepeat = true
            }
        }
        return Self.concatenation(items)
    }

    static func concatenation(_ items: [RegexNode]) -> RegexNode {
        switch items.count {
        case 0: .empty
        case 1: items[0]
        default: .concatenation(items)
        }
    }

    /// Parses `(…)`, `(?:…)`, `(?P<name>…)`, `(?<name>…)`, `(?flags:…)` or `(?flags)`; returns `nil` for the last,
    /// whose flags stay in force until the enclosing group ends.
    mutating func parseGroup() throws(RegexError) -> RegexNode? {
        index += 1
        skipSpace()
        if bumpIf("?=") || bumpIf("?!") || bumpIf("?<=") || bumpIf("?<!") { throw fail("look-around is not supported") }
        var groupFlags = flags
        if bumpIf("?P<") || bumpIf("?<") {
            try parseCaptureName()
        } else if bumpIf("?") {
            if isEOF { throw fail("a group is not closed") }
            let (updated, itemCount) = try parseFlags()
            groupFlags = updated
            if char == ")" {
                index += 1
                if itemCount == 0 { throw fail("an empty flag group '(?)'") }
                flags = updated
                return nil
            }
            index += 1  // ':'
        }
        depth += 1
        if depth > Self.nestLimit { throw fail("groups and classes are nested too deeply") }
        let saved = flags
        flags = groupFlags
        let body = try parseAlternation()
        guard !isEOF, char == ")" else { throw fail("a group is not closed") }
        index += 1
        flags = saved
        depth -= 1
        return body
    }

    mutating func parseCaptureName() throws(RegexError) {
        let start = index
        while !isEOF, char != ">" {
            let c = char.properties
            let valid =
                index == start
                ? char == "_" || c.isAlphabetic
                : char == "_" || char == "." || char == "[" || char == "]" || c.isAlphabetic || c.numericType != nil
            if !valid { throw fail("'\(char)' cannot be part of a group name") }
            index += 1
        }
        if isEOF { throw fail("a group name is not closed with '>'") }
        let name = String(String.UnicodeScalarView(chars[start..<index]))
        index += 1
        if name.isEmpty { throw fail("a group name is empty") }
        if !captureNames.insert(name).inserted { throw fail("the group name '\(name)' is used twice") }
    }

    /// Parses the flags of `(?flags)` or `(?flags:`, stopping at the `)` or `:`.
    mutating func parseFlags() throws(RegexError) -> (RegexFlags, Int) {
        var updated = flags
        var seen = Set<Unicode.Scalar>()
        var negate = false
        var lastWasNegation = false
        var count = 0
        while char != ":" && char != ")" {
            if char == "-" {
                if negate { throw fail("flags have a repeated '-'") }
                negate = true
                lastWasNegation = true
            } else {
                lastWasNegation = false
                if !seen.insert(char).inserted { throw fail("the flag '\(char)' is repeated") }
                let on = !negate
                switch char {
                case "i": updated.caseInsensitive = on
                case "m": updated.multiLine = on
                case "s": updated.dotMatchesNewline = on
                case "U": updated.swapGreed = on
                case "u": updated.unicode = on
                case "R": updated.crlf = on
                case "x": updated.ignoreWhitespace = on
                default: throw fail("'\(char)' is not a known flag")
                }
            }
            count += 1
            index += 1
            if isEOF { throw fail("a flag group is not closed") }
        }
        if lastWasNegation { throw fail("a '-' in flags has no flag after it") }
        return (updated, count)
    }

    /// Parses `{n}`, `{n,}` or `{n,m}` (the cursor is at `{`).
    mutating func parseCountedRepetition() throws(RegexError) -> (Int, Int?) {
        let unclosed = fail("a counted repetition is not closed with '}'")
        guard bumpAndSkipSpace() else { throw unclosed }
        let low = try parseDecimal()
        if isEOF { throw unclosed }
        var high: Int?
        if char == "," {
            guard bumpAndSkipSpace() else { throw unclosed }
            if char != "}" {
                guard let upper = try parseDecimal() else { throw fail("a counted repetition has no upper count") }
                high = upper
            }
        } else {
            high = low
        }
        guard let low else { throw fail("a counted repetition has no count") }
        if isEOF || char != "}" { throw unclosed }
        if bumpAndSkipSpace(), char == "?" { index += 1 }
        if let high, high < low { throw fail("the repetition {\(low),\(high)} is backwards") }
        if low > Self.maximumRepetition || (high ?? 0) > Self.maximumRepetition {
            throw fail("a repetition count is over \(Self.maximumRepetition)")
        }
        return (low, high)
    }

    /// A decimal number, with whitespace around it allowed (`nil`: no digits).
    mutating func parseDecimal() throws(RegexError) -> Int? {
        while !isEOF, char.properties.isWhitespace { index += 1 }
        var digits = ""
        while !isEOF, ("0"..."9").contains(char) {
            digits.unicodeScalars.append(char)
            _ = bumpAndSkipSpace()
        }
        while !isEOF, char.properties.isWhitespace { _ = bumpAndSkipSpace() }
        if digits.isEmpty { return nil }
        guard let value = UInt32(digits) else { throw fail("the repetition count \(digits) is too large") }
        return Int(value)
    }

    // MARK: - Primitives

    mutating func parsePrimitive() throws(RegexError) -> RegexNode {
        let c = char
        switch c {
        case "\\":
            switch try parseEscape() {
            case .literal(let value, let isByte): return try literal(value, isByte: isByte)
            case .set(let set): return .set(set)
            case .assertion(let assertion): return .assertion(assertion)
            }
        case ".":
            index += 1
            guard flags.unicode else { throw fail("in (?-u) mode '.' can match invalid UTF-8") }
            if flags.dotMatchesNewline { return .set(.all) }
            return .set((flags.crlf ? ScalarSet([0x0A...0x0A, 0x0D...0x0D]) : ScalarSet(scalar: 0x0A)).inverted())
        case "^":
            index += 1
            return .assertion(flags.multiLine ? (flags.crlf ? .startLineCRLF : .startLine) : .startText)
        case "$":
            index += 1
            return .assertion(flags.multiLine ? (flags.crlf ? .endLineCRLF : .endLine) : .endText)
        default:
            index += 1
            return try literal(c.value, isByte: false)
        }
    }

    /// One literal under the current flags: a set of its case variants under `(?i)`.
    func literal(_ value: UInt32, isByte: Bool) throws(RegexError) -> RegexNode {
        if !flags.unicode, isByte, value > 0x7F {
            throw fail("in (?-u) mode the byte \\x\(String(value, radix: 16, uppercase: true)) can match invalid UTF-8")
        }
        guard flags.caseInsensitive else { return .scalar(value) }
        let folded = ScalarSet(scalar: value).caseFolded(asciiOnly: !flags.unicode)
        if let single = folded.singleScalar { return .scalar(single) }
        return .set(folded)
    }
}
