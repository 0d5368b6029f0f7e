/// Bracketed classes: `[abc]`, `[^a-z]`, `[]a]`, `[-a]`, nested `[a[bc]]`, POSIX `[[:alpha:]]`, and the set
/// operations `&&` (intersection), `--` (difference) and `~~` (symmetric difference), left-associative and below union.
extension RegexParser {
    /// One item of a class before it is known whether it starts a range.
    private enum ClassItem {
        case literal(UInt32, isByte: Bool)
        case set(ScalarSet)
    }

    /// The largest member a class may have: code points, or bytes in `(?-u)` mode.
    private var classMaximum: UInt32 { flags.unicode ? ScalarSet.maxScalar : 0xFF }

    /// A whole bracketed class at the top level (the cursor is at `[`).
    mutating func parseBracketedClass() throws(RegexError) -> RegexNode {
        let set = try parseBracket()
        if !flags.unicode, let maximum = set.maximum, maximum > 0x7F {
            throw fail("in (?-u) mode this class can match invalid UTF-8")
        }
        if let single = set.singleScalar { return .scalar(single) }
        return .set(set)
    }

    /// A bracketed class, possibly nested (the cursor is at `[`); already folded and negated.
    private mutating func parseBracket() throws(RegexError) -> ScalarSet {
        let unclosed = fail("a character class is not closed with ']'")
        depth += 1
        if depth > Self.nestLimit { throw fail("groups and classes are nested too deeply") }
        guard bumpAndSkipSpace() else { throw unclosed }
        var negated = false
        if char == "^" {
            negated = true
            guard bumpAndSkipSpace() else { throw unclosed }
        }
        var union = ScalarSet.empty
        var leadingDash = false
        while char == "-" {
            union = union.union(ScalarSet(scalar: 0x2D))
            leadingDash = true
            guard bumpAndSkipSpace() else { throw unclosed }
        }
        if !leadingDash, char == "]" {
            union = ScalarSet(scalar: 0x5D)
            guard bumpAndSkipSpace() else { throw unclosed }
        }
        var left: (set: ScalarSet, operation: Unicode.Scalar)?
        while true {
            skipSpace()
            if isEOF { throw unclosed }
            let c = char
            switch c {
            case "[":
                if let posix = parsePosixClass() {
                    union = union.union(posix)
                } else {
                    union = union.union(try parseBracket())
                }
            case "]":
                index += 1
                depth -= 1
                var result = union
                if let left { result = combine(left.set, left.operation, result) }
                if flags.caseInsensitive { result = result.caseFolded(asciiOnly: !flags.unicode) }
                return negated ? result.inverted(upTo: classMaximum) : result
            case "&" where peek() == c, "-" where peek() == c, "~" where peek() == c:
                index += 2
                left = (left.map { combine($0.set, $0.operation, union) } ?? union, c)
                union = .empty
            default:
                union = union.union(try parseClassRange())
            }
        }
    }

    /// Applies a set operation; under `(?i)` both sides are folded first, as in Rust's regex.
    private func combine(_ left: ScalarSet, _ operation: Unicode.Scalar, _ right: ScalarSet) -> ScalarSet {
        var (left, right) = (left, right)
        if flags.caseInsensitive {
            left = left.caseFolded(asciiOnly: !flags.unicode)
            right = right.caseFolded(asciiOnly: !flags.unicode)
        }
        switch operation {
        case "&": return left.intersection(right)
        case "-": return left.subtracting(right)
        default: return left.symmetricDifference(right)
        }
    }

    /// `[:name:]` or `[:^name:]` with a known name (the cursor is at the inner `[`); `nil` leaves the cursor alone.
    private mutating func parsePosixClass() -> ScalarSet? {
        guard peek() == ":" else { return nil }
        var cursor = index + 2
        var negated = false
        if cursor < chars.count, chars[cursor] == "^" {
            negated = true
            cursor += 1
        }
        let nameStart = cursor
        while cursor < chars.count, chars[cursor] != ":" { cursor += 1 }
        guard cursor + 1 < chars.count, chars[cursor + 1] == "]" else { return nil }
        let name = String(String.UnicodeScalarView(chars[nameStart..<cursor]))
        guard let set = UnicodeTables.posixClasses[name] else { return nil }
        index = cursor + 2
        return negated ? set.inverted(upTo: classMaximum) : set
    }

    /// One item or a range `a-z` (an item followed by `-` and anything but `]` or `-`).
    private mutating func parseClassRange() throws(RegexError) -> ScalarSet {
        let unclosed = fail("a character class is not closed with ']'")
        let first = try parseClassItem()
        skipSpace()
        if isEOF { throw unclosed }
        if char != "-" || peekSkippingSpace() == "]" || peekSkippingSpace() == "-" { return try classSet(first) }
        guard bumpAndSkipSpace() else { throw unclosed }
        let second = try parseClassItem()
        guard case .literal(let low, let lowIsByte) = first, case .literal(let high, let highIsByte) = second else {
            throw fail("a class range must go from one character to another (not from or to a class such as \\d)")
        }
        _ = try classSet(.literal(low, isByte: lowIsByte))
        _ = try classSet(.literal(high, isByte: highIsByte))
        guard low <= high else {
            throw fail("the class range from \\u{\(String(low, radix: 16))} to \\u{\(String(high, radix: 16))} is backwards")
        }
        return ScalarSet([low...high])
    }

    private mutating func parseClassItem() throws(RegexError) -> ClassItem {
        guard char == "\\" else {
            let c = char
            index += 1
            return .literal(c.value, isByte: false)
        }
        switch try parseEscape() {
        case .literal(let value, let isByte): return .literal(value, isByte: isByte)
        case .set(let set): return .set(set)
        case .assertion: throw fail("an assertion such as \\b is not allowed in a character class")
        }
    }

    /// The set of one item; in `(?-u)` mode a non-ASCII character is refused unless it is a `\x` byte escape.
    private func classSet(_ item: ClassItem) throws(RegexError) -> ScalarSet {
        switch item {
        case .set(let set): return set
        case .literal(let value, let isByte):
            if !flags.unicode, value > 0x7F, !(isByte && value <= 0xFF) {
                throw fail("in (?-u) mode a class cannot hold the non-ASCII character \\u{\(String(value, radix: 16))}")
            }
            return ScalarSet(scalar: value)
        }
    }
}
