import Foundation

/// A regular expression with the semantics of Unleash's engine (Rust's `regex` crate, RE2-style), run on
/// `NSRegularExpression` (ICU).
///
/// ICU accepts more than RE2 and differs in a few places, so the pattern is first checked and translated:
/// - refused, as RE2 refuses them: look-around, back-references, atomic groups, possessive quantifiers,
///   `\Z`, `\G`, `\Q…\E`, comments `(?#…)`, branch reset, the `U` (swap greed) flag, unknown escapes;
/// - translated: `(?P<name>` → `(?<name>`; POSIX classes `[[:alpha:]]` → ASCII ranges (RE2's are ASCII-only);
///   `\v` → vertical tab only; `\u{…}`/`\x{…}` → `\x{…}`; `\<` and `\>` → word start/end;
///   `$` outside multi-line mode → `\z` (RE2's `$` does not match before a final newline);
/// - matched with `.useUnixLineSeparators`, so `.`, `^` and `$` know only `\n`, as in RE2.
/// A match anywhere in the value counts (`is_match`), as in Unleash.
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

    private static let posixClasses: [String: String] = [
        "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x{0}-\\x{7F}", "blank": "\\t ",
        "cntrl": "\\x{0}-\\x{1F}\\x{7F}", "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
        "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\x{B}\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_",
        "xdigit": "0-9A-Fa-f",
    ]

    /// Checks RE2 syntax rules that ICU would not enforce, and rewrites the differing constructs.
    static func translate(_ pattern: String) throws(RegexProblem) -> String {
        let chars = Array(pattern.unicodeScalars)
        var output = ""
        var index = 0
        // Multi-line flag per open group; the top level is the first element.
        var multiline: [Bool] = [false]
        func fail(_ why: String) -> RegexProblem {
            RegexProblem("'\(pattern)' is not a valid regular expression: \(why)")
        }
        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < chars.count ? chars[index + offset] : nil
        }
        var lastWasQuantifier = false

        /// Translates one escape starting at `index` (which points at the backslash). Returns ICU text.
        func escape(inClass: Bool) throws(RegexProblem) -> String {
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
                    throw fail("'\\b{…}' word-boundary forms are not supported here")
                }
                return "\\" + String(next)
            case "x", "u", "U":
                var hex = ""
                if peek() == "{" {
                    index += 1
                    while let c = peek(), c != "}" { hex.unicodeScalars.append(c); index += 1 }
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
                guard !hex.isEmpty, hex.count <= 8, let value = UInt32(hex, radix: 16), Unicode.Scalar(value) != nil
                else { throw fail("'\\\(next)\(hex)' is not a valid code point") }
                return "\\x{\(hex)}"
            case "p", "P":
                var name = ""
                if peek() == "{" {
                    while let c = peek() {
                        name.unicodeScalars.append(c)
                        index += 1
                        if c == "}" { break }
                    }
                    guard name.hasSuffix("}") else { throw fail("an unterminated '\\\(next){'") }
                } else if let c = peek() {
                    name = String(c)
                    index += 1
                } else {
                    throw fail("a missing Unicode class name")
                }
                return "\\" + String(next) + name
            default:
                if next.properties.isAlphabetic || next.properties.numericType != nil {
                    // \d \D \w \W \s \S \t \n \r \f are the remaining letters RE2 knows.
                    guard "dDwWsStnrf".unicodeScalars.contains(next) else { throw fail("'\\\(next)' is not a known escape") }
                    return "\\" + String(next)
                }
                // Escaped punctuation: a literal.
                return "\\" + String(next)
            }
        }

        /// Translates a bracketed class starting at `index` (pointing at '[').
        func characterClass() throws(RegexProblem) -> String {
            var text = "["
            index += 1
            if peek() == "^" { text += "^"; index += 1 }
            var first = true
            var previousWasClassEscape = false
            while true {
                guard let c = peek() else { throw fail("an unclosed character class") }
                if c == "]" && !first { index += 1; break }
                first = false
                if c == "[" && peek(1) == ":" {
                    // POSIX class [:name:] or [:^name:].
                    var cursor = index + 2
                    var negated = false
                    if cursor < chars.count, chars[cursor] == "^" { negated = true; cursor += 1 }
                    var name = ""
                    while cursor < chars.count, chars[cursor] != ":" { name.unicodeScalars.append(chars[cursor]); cursor += 1 }
                    if cursor + 1 < chars.count, chars[cursor + 1] == "]", let ranges = posixClasses[name] {
                        text += negated ? "[^\(ranges)]" : ranges
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
                if c == "-", !first, let next = peek(1), next != "]" {
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

        while let c = peek() {
            switch c {
            case "\\":
                output += try escape(inClass: false)
                lastWasQuantifier = false
            case "[":
                output += try characterClass()
                lastWasQuantifier = false
            case "(":
                index += 1
                if peek() == "?" {
                    index += 1
                    guard let kind = peek() else { throw fail("an unterminated group") }
                    switch kind {
                    case "=", "!": throw fail("look-ahead is not supported")
                    case ">": throw fail("atomic groups are not supported")
                    case "#": throw fail("comments are not supported")
                    case "|": throw fail("branch reset is not supported")
                    case ":":
                        index += 1
                        output += "(?:"
                        multiline.append(multiline.last ?? false)
                    case "<", "P":
                        if kind == "<", peek(1) == "=" || peek(1) == "!" { throw fail("look-behind is not supported") }
                        if kind == "P" {
                            guard peek(1) == "<" else { throw fail("an invalid group") }
                            index += 1
                        }
                        // The group name, copied verbatim: (?P<name> and (?<name> both become (?<name>.
                        var name = ""
                        index += 1
                        while let n = peek(), n != ">" { name.unicodeScalars.append(n); index += 1 }
                        guard peek() == ">", !name.isEmpty else { throw fail("an invalid group name") }
                        index += 1
                        output += "(?<\(name)>"
                        multiline.append(multiline.last ?? false)
                    default:
                        // Flags: (?flags) or (?flags:…)
                        var flags = ""
                        var negate = false
                        var current = multiline.last ?? false
                        while let f = peek(), f != ")" && f != ":" {
                            switch f {
                            case "-": negate = true
                            case "i", "s", "x": flags.unicodeScalars.append(f)
                            case "m": current = !negate
                            case "u", "R": break  // Unicode mode and CRLF mode: no ICU equivalent; ignored.
                            case "U": throw fail("the 'U' (swap greed) flag is not supported")
                            default: throw fail("'\(f)' is not a known flag")
                            }
                            if f == "-" || f == "m" { flags.unicodeScalars.append(f) }
                            index += 1
                        }
                        guard let end = peek() else { throw fail("an unterminated flag group") }
                        index += 1
                        if flags.hasSuffix("-") { flags.removeLast() }
                        let text = flags.isEmpty || flags == "-" ? "" : flags
                        if end == ")" {
                            if !text.isEmpty { output += "(?\(text))" }
                            multiline[multiline.count - 1] = current
                        } else {
                            output += "(?\(text):"
                            multiline.append(current)
                        }
                    }
                } else {
                    output += "("
                    multiline.append(multiline.last ?? false)
                }
                lastWasQuantifier = false
            case ")":
                index += 1
                if multiline.count > 1 { multiline.removeLast() }
                output += ")"
                lastWasQuantifier = false
            case "$":
                index += 1
                output += (multiline.last ?? false) ? "$" : "\\z"
                lastWasQuantifier = false
            case "*", "+", "?", "{":
                if c == "{" {
                    // A counted repetition {n}, {n,}, {n,m}; anything else is a literal brace.
                    var cursor = index + 1
                    var body = ""
                    while cursor < chars.count, chars[cursor] != "}" { body.unicodeScalars.append(chars[cursor]); cursor += 1 }
                    let isRepetition = cursor < chars.count && body.range(of: #"^\s*\d+\s*(,\s*\d*\s*)?$"#, options: .regularExpression) != nil
                    if !isRepetition {
                        output += "\\{"
                        index += 1
                        lastWasQuantifier = false
                        continue
                    }
                    if lastWasQuantifier { throw fail("a repetition of a repetition") }
                    output += "{" + body.filter { !$0.isWhitespace } + "}"
                    index = cursor + 1
                } else {
                    if lastWasQuantifier { throw fail("a repetition of a repetition") }
                    output.unicodeScalars.append(c)
                    index += 1
                }
                if peek() == "?" {
                    output += "?"
                    index += 1
                }
                lastWasQuantifier = true
            default:
                if c.properties.changesWhenCaseFolded || c.properties.changesWhenCaseMapped {
                    // ICU folds literal strings with full case folding under (?i) ("ß" matches "SS"); RE2 uses
                    // simple folding, which is what ICU applies to sets — so a cased letter becomes a one-letter set.
                    output += "[\(String(c))]"
                } else {
                    output.unicodeScalars.append(c)
                }
                index += 1
                lastWasQuantifier = false
            }
        }
        return output
    }
}
