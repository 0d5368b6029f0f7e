import Foundation

/// A regular expression with the semantics of Unleash's engine (Rust's `regex` crate, RE2-style), run on
/// `NSRegularExpression` (ICU).
///
/// ICU accepts more than RE2 and differs in a few places, so the pattern is first checked and translated:
/// - refused, as RE2 refuses them: look-around, back-references, atomic groups, `\Z`, `\G`, `\Q…\E`,
///   comments `(?#…)`, unknown escapes, repeated flags, class escapes as range ends (`[\d-z]`), and in `(?-u)`
///   mode anything that could match invalid UTF-8 (`.`, `\W`, negated classes);
/// - translated: `(?P<name>` → `(?<name>`; POSIX classes `[[:alpha:]]` → ASCII sets (RE2's are ASCII-only);
///   `\v` → vertical tab only; `\u{…}`/`\x{…}`/`\U…` → `\x{…}`; `\pL` → `\p{L}`; `\<`, `\>`, `\b{start}`…
///   → look-around equivalents; `$` outside multi-line mode → `\z` (RE2's `$` does not match before a final
///   newline); a repeated repetition (`a++`, `a**`) → `(?:a+)+` (ICU would read `a++` as possessive); the `U`
///   (swap greed) flag → swapped lazy markers; `(?-u)` classes → ASCII sets; every cased literal letter → a
///   one-letter set, because ICU folds literal strings with full case folding (`ß` = `SS`) and sets with simple
///   folding, which is RE2's;
/// - matched with `.useUnixLineSeparators`, so `.`, `^` and `$` know only `\n`, as in RE2.
/// A match anywhere in the value counts (`is_match`), as in Unleash. A differential test compares over 200
/// patterns with Unleash's engine.
struct UnleashRegex: @unchecked Sendable {
    // NSRegularExpression is immutable and documented as safe to use from several threads at once.
    private let expression: NSRegularExpression

    /// Compiles `pattern`; throws a readable message when Unleash's engine would refuse it.
    init(_ pattern: String, caseInsensitive: Bool) throws(RegexProblem) {
        let translated = try Self.translate(pattern)
        var options: NSRegularExpression.Options = [.useUnixLineSeparators]
        if caseInsensitive { options.insert(.caseInsensitive) }
        do {
            expression = try NSRegularExpression(pattern: translated, options: options)
        } catch {
            throw RegexProblem("'\(pattern)' is not a valid regular expression")
        }
    }

    /// Whether the pattern matches anywhere in `text`.
    func matches(_ text: String) -> Bool {
        let range = NSRange(location: 0, length: (text as NSString).length)
        return expression.firstMatch(in: text, options: [], range: range) != nil
    }

    struct RegexProblem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    fileprivate static let posixClasses: [String: String] = [
        "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x{0}-\\x{7F}", "blank": "\\t ",
        "cntrl": "\\x{0}-\\x{1F}\\x{7F}", "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
        "punct": "!-/\\:-@\\[-`{-~", "space": "\\t\\n\\x{B}\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_",
        "xdigit": "0-9A-Fa-f",
    ]

    /// ASCII-only classes for `(?-u)` mode.
    fileprivate static let asciiClasses: [Unicode.Scalar: (body: String, negated: Bool)] = [
        "d": ("0-9", false), "D": ("0-9", true), "w": ("0-9A-Za-z_", false), "W": ("0-9A-Za-z_", true),
        "s": ("\\t\\n\\x{B}\\f\\r ", false), "S": ("\\t\\n\\x{B}\\f\\r ", true),
    ]

    /// The inline flags RE2 tracks that change the translation.
    private struct Flags {
        var multiline = false
        var swapGreed = false
        var unicode = true
    }

    /// Checks RE2 syntax rules that ICU would not enforce, and rewrites the differing constructs.
    static func translate(_ pattern: String) throws(RegexProblem) -> String {
        var translator = Translator(pattern: pattern)
        return try translator.run()
    }

    private struct Translator {
        let pattern: String
        let chars: [Unicode.Scalar]
        var index = 0
        var out: [Unicode.Scalar] = []
        /// Flags per open group; the top level is the first element.
        var flags: [Flags] = [Flags()]
        /// Where each open group starts in `out`.
        var groupStarts: [Int] = []
        /// Where the last complete atom starts in `out` (`nil`: nothing to repeat).
        var atomStart: Int?
        /// Whether the last thing emitted was a quantifier (RE2 allows repeating it: `a**` is `(?:a*)*`).
        var lastWasQuantifier = false

        init(pattern: String) {
            self.pattern = pattern
            chars = Array(pattern.unicodeScalars)
        }

        var current: Flags { flags.last ?? Flags() }

        func fail(_ why: String) -> RegexProblem {
            RegexProblem("'\(pattern)' is not a valid regular expression: \(why)")
        }

        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < chars.count ? chars[index + offset] : nil
        }

        mutating func emit(_ text: String) { out.append(contentsOf: text.unicodeScalars) }

        /// Emits one atom (something a quantifier may follow).
        mutating func emitAtom(_ text: String) {
            atomStart = out.count
            emit(text)
            lastWasQuantifier = false
        }

        /// Emits a zero-width assertion or other non-repeatable item.
        mutating func emitAssertion(_ text: String) {
            atomStart = out.count
            emit(text)
            lastWasQuantifier = false
        }

        mutating func run() throws(RegexProblem) -> String {
            while let c = peek() {
                switch c {
                case "\\":
                    let text = try escape(inClass: false)
                    emitAtom(text)
                case "[":
                    let start = out.count
                    let text = try characterClass()
                    out.append(contentsOf: text.unicodeScalars)
                    atomStart = start
                    lastWasQuantifier = false
                case "(":
                    try openGroup()
                case ")":
                    index += 1
                    guard let start = groupStarts.popLast() else { throw fail("an unopened group") }
                    if flags.count > 1 { flags.removeLast() }
                    emit(")")
                    atomStart = start
                    lastWasQuantifier = false
                case "$":
                    index += 1
                    emitAssertion(current.multiline ? "$" : "\\z")
                case "^":
                    index += 1
                    emitAssertion("^")
                case "." where !current.unicode:
                    throw fail("in (?-u) mode '.' can match invalid UTF-8")
                case "|":
                    index += 1
                    emit("|")
                    atomStart = nil
                    lastWasQuantifier = false
                case "*", "+", "?", "{":
                    try quantifier(c)
                default:
                    index += 1
                    if c.properties.changesWhenCaseFolded || c.properties.changesWhenCaseMapped {
                        // ICU folds literal strings with full case folding under (?i) ("ß" matches "SS"); RE2 uses
                        // simple folding, which is what ICU applies to sets — so a cased letter becomes a one-letter set.
                        emitAtom("[\(String(c))]")
                    } else {
                        emitAtom(String(c))
                    }
                }
            }
            guard groupStarts.isEmpty else { throw fail("an unclosed group") }
            return out.isEmpty ? "(?:)" : String(String.UnicodeScalarView(out))
        }

        mutating func quantifier(_ c: Unicode.Scalar) throws(RegexProblem) {
            var text: String
            if c == "{" {
                // A counted repetition {n}, {n,}, {n,m}; anything else is a literal brace.
                var cursor = index + 1
                var body = ""
                while cursor < chars.count, chars[cursor] != "}" {
                    body.unicodeScalars.append(chars[cursor])
                    cursor += 1
                }
                let compact = body.filter { !$0.isWhitespace }
                let parts = compact.split(separator: ",", omittingEmptySubsequences: false)
                let isRepetition =
                    cursor < chars.count && !compact.isEmpty && parts.count <= 2
                    && parts.enumerated().allSatisfy {
                        $0.offset == 1
                            ? $0.element.allSatisfy { ("0"..."9").contains($0) }
                            : (!$0.element.isEmpty && $0.element.allSatisfy { ("0"..."9").contains($0) })
                    }
                if !isRepetition {
                    index += 1
                    emitAtom("\\{")
                    return
                }
                if parts.count == 2, let low = Int(parts[0]), let high = Int(parts[1]), high < low {
                    throw fail("the repetition {\(compact)} is backwards")
                }
                if parts.contains(where: { (Int($0) ?? 0) > 1000 }) { throw fail("the repetition {\(compact)} is too large") }
                text = "{" + compact + "}"
                index = cursor + 1
            } else {
                text = String(c)
                index += 1
            }
            guard let start = atomStart else { throw fail("a repetition with nothing to repeat") }
            var lazy = false
            if peek() == "?" {
                lazy = true
                index += 1
            }
            if current.swapGreed { lazy.toggle() }
            if lastWasQuantifier {
                // RE2 repeats the repetition; ICU would read `a++` as possessive.
                out.insert(contentsOf: "(?:".unicodeScalars, at: start)
                emit(")")
            }
            emit(text + (lazy ? "?" : ""))
            lastWasQuantifier = true
        }

        mutating func openGroup() throws(RegexProblem) {
            let start = out.count
            index += 1
            guard peek() == "?" else {
                groupStarts.append(start)
                flags.append(current)
                emit("(")
                atomStart = nil
                lastWasQuantifier = false
                return
            }
            index += 1
            guard let kind = peek() else { throw fail("an unterminated group") }
            switch kind {
            case "=", "!": throw fail("look-ahead is not supported")
            case ">": throw fail("atomic groups are not supported")
            case "#": throw fail("comments are not supported")
            case "|": throw fail("branch reset is not supported")
            case ":":
                index += 1
                groupStarts.append(start)
                flags.append(current)
                emit("(?:")
            case "<", "P":
                if kind == "<", peek(1) == "=" || peek(1) == "!" { throw fail("look-behind is not supported") }
                if kind == "P" {
                    guard peek(1) == "<" else { throw fail("an invalid group") }
                    index += 1
                }
                // The group name, copied verbatim: (?P<name> and (?<name> both become (?<name>.
                var name = ""
                index += 1
                while let n = peek(), n != ">" {
                    name.unicodeScalars.append(n)
                    index += 1
                }
                guard peek() == ">", !name.isEmpty,
                    name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }),
                    let first = name.unicodeScalars.first, !("0"..."9").contains(first)
                else { throw fail("an invalid group name") }
                index += 1
                groupStarts.append(start)
                flags.append(current)
                emit("(?<\(name)>")
            default:
                // Flags: (?flags) or (?flags:…)
                var icu = ""
                var negate = false
                var updated = current
                var sawFlag = false
                var seen = Set<Unicode.Scalar>()
                while let f = peek(), f != ")" && f != ":" {
                    if f != "-", !seen.insert(f).inserted { throw fail("the flag '\(f)' is repeated") }
                    switch f {
                    case "-":
                        if negate { throw fail("a repeated '-' in flags") }
                        negate = true
                        icu += "-"
                    case "i", "s", "x":
                        icu.unicodeScalars.append(f)
                        sawFlag = true
                    case "m":
                        updated.multiline = !negate
                        icu += "m"
                        sawFlag = true
                    case "U":
                        updated.swapGreed = !negate
                        sawFlag = true
                    case "u":
                        updated.unicode = !negate
                        sawFlag = true
                    case "R":
                        sawFlag = true  // CRLF mode: no ICU equivalent; ignored.
                    default:
                        throw fail("'\(f)' is not a known flag")
                    }
                    index += 1
                }
                guard let end = peek() else { throw fail("an unterminated flag group") }
                guard sawFlag else { throw fail("an empty flag group") }
                index += 1
                if icu.hasSuffix("-") { icu.removeLast() }
                if end == ")" {
                    if !icu.isEmpty { emit("(?\(icu))") }
                    flags[flags.count - 1] = updated
                    atomStart = nil
                    lastWasQuantifier = false
                } else {
                    groupStarts.append(start)
                    flags.append(updated)
                    emit("(?\(icu):")
                }
            }
            atomStart = nil
            lastWasQuantifier = false
        }

        /// Translates one escape starting at `index` (which points at the backslash). Returns ICU text.
        mutating func escape(inClass: Bool) throws(RegexProblem) -> String {
            guard let next = peek(1) else { throw fail("a trailing backslash") }
            index += 2
            switch next {
            case "1"..."9": throw fail("back-references are not supported")
            case "0": throw fail("octal escapes are not supported")
            case "k": throw fail("named back-references are not supported")
            case "Z", "G", "Q", "E", "K", "R", "X", "N", "h", "H", "V", "c", "e", "g", "o", "y", "i", "j", "l", "m", "q", "C", "F",
                "I", "J", "L", "M", "O", "T", "Y":
                throw fail("'\\\(next)' is not supported")
            case "v": return "\\x{B}"
            case "a": return "\\x{7}"
            case "<", ">":
                if inClass { return "\\" + String(next) }
                return next == "<" ? "\\b(?=\\w)" : "\\b(?<=\\w)"
            case "b", "B", "A", "z":
                if inClass { throw fail("'\\\(next)' is not allowed in a character class") }
                if next == "b", peek() == "{" {
                    var name = ""
                    var cursor = index + 1
                    while cursor < chars.count, chars[cursor] != "}" {
                        name.unicodeScalars.append(chars[cursor])
                        cursor += 1
                    }
                    let forms = ["start": "\\b(?=\\w)", "end": "\\b(?<=\\w)", "start-half": "(?<!\\w)", "end-half": "(?!\\w)"]
                    guard cursor < chars.count, let form = forms[name] else { throw fail("'\\b{\(name)}' is not a known word boundary") }
                    index = cursor + 1
                    return form
                }
                if !current.unicode, next == "b" || next == "B" {
                    let w = "[0-9A-Za-z_]"
                    let boundary = "(?:(?<=\(w))(?!\(w))|(?<!\(w))(?=\(w)))"
                    return next == "b" ? boundary : "(?!\(boundary))"
                }
                return "\\" + String(next)
            case "x", "u", "U":
                var hex = ""
                if peek() == "{" {
                    index += 1
                    while let c = peek(), c != "}" {
                        hex.unicodeScalars.append(c)
                        index += 1
                    }
                    guard peek() == "}" else { throw fail("an unterminated '\\\(next){'") }
                    index += 1
                } else {
                    let width = next == "x" ? 2 : next == "u" ? 4 : 8
                    for _ in 0..<width {
                        guard let c = peek() else { throw fail("a short '\\\(next)' escape") }
                        hex.unicodeScalars.append(c)
                        index += 1
                    }
                }
                guard !hex.isEmpty, hex.count <= 8, hex.unicodeScalars.allSatisfy({ $0.properties.isASCIIHexDigit }),
                    let value = UInt32(hex, radix: 16), Unicode.Scalar(value) != nil
                else { throw fail("'\\\(next)\(hex)' is not a valid code point") }
                return "\\x{\(String(value, radix: 16))}"
            case "p", "P":
                var name = ""
                if peek() == "{" {
                    index += 1
                    while let c = peek(), c != "}" {
                        name.unicodeScalars.append(c)
                        index += 1
                    }
                    guard peek() == "}" else { throw fail("an unterminated '\\\(next){'") }
                    index += 1
                } else if let c = peek() {
                    name = String(c)
                    index += 1
                } else {
                    throw fail("a missing Unicode class name")
                }
                return "\\" + String(next) + "{" + name + "}"
            default:
                if next.properties.isAlphabetic || next.properties.numericType != nil {
                    // \d \D \w \W \s \S \t \n \r \f are the remaining letters RE2 knows.
                    guard "dDwWsStnrf".unicodeScalars.contains(next) else { throw fail("'\\\(next)' is not a known escape") }
                    if !current.unicode, let ascii = UnleashRegex.asciiClasses[next] {
                        if ascii.negated { throw fail("in (?-u) mode '\\\(next)' can match invalid UTF-8") }
                        if inClass && !ascii.negated { return ascii.body }
                        return ascii.negated ? "[^\(ascii.body)]" : "[\(ascii.body)]"
                    }
                    return "\\" + String(next)
                }
                // Escaped punctuation: a literal.
                return "\\" + String(next)
            }
        }

        /// Translates a bracketed class starting at `index` (pointing at '[').
        mutating func characterClass() throws(RegexProblem) -> String {
            var text = "["
            index += 1
            if peek() == "^" {
                if !current.unicode { throw fail("in (?-u) mode a negated class can match invalid UTF-8") }
                text += "^"
                index += 1
            }
            var first = true
            var previousWasClassEscape = false
            while true {
                guard let c = peek() else { throw fail("an unclosed character class") }
                if c == "]" && !first {
                    index += 1
                    break
                }
                first = false
                if c == "[" && peek(1) == ":" {
                    // POSIX class [:name:] or [:^name:].
                    var cursor = index + 2
                    var negated = false
                    if cursor < chars.count, chars[cursor] == "^" {
                        negated = true
                        cursor += 1
                    }
                    var name = ""
                    while cursor < chars.count, chars[cursor] != ":" {
                        name.unicodeScalars.append(chars[cursor])
                        cursor += 1
                    }
                    if cursor + 1 < chars.count, chars[cursor + 1] == "]", let ranges = UnleashRegex.posixClasses[name] {
                        if negated, !current.unicode { throw fail("in (?-u) mode a negated class can match invalid UTF-8") }
                        text += negated ? "[^\(ranges)]" : "[\(ranges)]"
                        index = cursor + 2
                        previousWasClassEscape = true
                        continue
                    }
                    // Not a POSIX class name: RE2 reads it as a nested class of the literal characters.
                }
                if c == "[" {
                    text += try characterClass()
                    previousWasClassEscape = true
                    continue
                }
                if (c == "-" && peek(1) == "-") || (c == "&" && peek(1) == "&") {
                    // Set difference and intersection, which ICU spells the same way.
                    text.unicodeScalars.append(c)
                    text.unicodeScalars.append(c)
                    index += 2
                    previousWasClassEscape = false
                    continue
                }
                if c == "-", let next = peek(1), next != "]", text != "[", text != "[^" {
                    // A range: RE2 refuses class escapes such as \d as either end.
                    if previousWasClassEscape { throw fail("a character class range cannot start with a class") }
                    if next == "\\", let kind = peek(2), "dDwWsSpP".unicodeScalars.contains(kind) {
                        throw fail("a character class range cannot end with a class")
                    }
                }
                if c == "\\" {
                    let kind = peek(1)
                    text += try escape(inClass: true)
                    previousWasClassEscape = kind.map { "dDwWsSpP".unicodeScalars.contains($0) } ?? false
                    continue
                }
                previousWasClassEscape = false
                if c == "~" && peek(1) == "~" { throw fail("'~~' class operations are not supported here") }
                if c == ":" {
                    text += "\\:"  // ICU would read "[:" as the start of a property name.
                    index += 1
                    continue
                }
                text.unicodeScalars.append(c)
                index += 1
            }
            text += "]"
            return text
        }
    }
}
