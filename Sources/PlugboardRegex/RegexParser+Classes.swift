/// Escapes (`\n`, `\x{…}`, `\d`, `\p{…}`, `\b{start}`…) and bracketed classes (`[a-z&&[^aeiou]]`, `[[:alpha:]]`).
import Foundation

extension RegexParser {
    /// What an escape stands for.
    enum Escape {
        /// A character; `isByte` for `\x` escapes, which are bytes in `(?-u)` mode.
        case literal(UInt32, isByte: Bool)
        /// A class (`\d`, `\pL`), already negated and folded as the flags require.
        case set(ScalarSet)
        case assertion(RegexAssertion)
    }

    /// RE2's meta characters, which an escape makes literal.
    static func isMeta(_ c: Unicode.Scalar) -> Bool { "\\.+*?()|[]{}^$#&-~".unicodeScalars.contains(c) }

    /// Parses an escape (the cursor is at the backslash).
    mutating func parseEscape() throws(RegexError) -> Escape {
        guard bumpAndSkipSpaceless() else { throw fail("the pattern ends with a backslash") }
        let c = char
        switch c {
        case "0"..."9": throw fail("back-references and octal escapes such as '\\\(c)' are not supported")
        case "x", "u", "U": return .literal(try parseHex(), isByte: c == "x")
        case "p", "P": return .set(try parseUnicodeClass())
        case "d", "s", "w", "D", "S", "W":
            index += 1
            return .set(try perlClass(c))
        default: break
        }
        index += 1
        if Self.isMeta(c) || (c.isASCII && !c.properties.isAlphabetic && !("0"..."9").contains(c) && c != "<" && c != ">") {
            return .literal(c.value, isByte: false)
        }
        let unicode = flags.unicode
        switch c {
        case "a": return .literal(0x07, isByte: false)
        case "f": return .literal(0x0C, isByte: false)
        case "t": return .literal(0x09, isByte: false)
        case "n": return .literal(0x0A, isByte: false)
        case "r": return .literal(0x0D, isByte: false)
        case "v": return .literal(0x0B, isByte: false)
        case "A": return .assertion(.startText)
        case "z": return .assertion(.endText)
        case "B": return .assertion(unicode ? .notWordBoundary : .asciiNotWordBoundary)
        case "<": return .assertion(unicode ? .wordStart : .asciiWordStart)
        case ">": return .assertion(unicode ? .wordEnd : .asciiWordEnd)
        case "b":
            guard !isEOF, char == "{" else { return .assertion(unicode ? .wordBoundary : .asciiWordBoundary) }
            return .assertion(try parseSpecialWordBoundary())
        default: throw fail("'\\\(c)' is not a known escape")
        }
    }

    /// Moves past the backslash (no space skipping: `\ ` is an escaped space).
    private mutating func bumpAndSkipSpaceless() -> Bool {
        index += 1
        return !isEOF
    }

    /// `\b{start}`, `\b{end}`, `\b{start-half}`, `\b{end-half}`; anything else after `\b` is a repetition (`\b{2}`).
    private mutating func parseSpecialWordBoundary() throws(RegexError) -> RegexAssertion {
        let unicode = flags.unicode
        let start = index
        guard bumpAndSkipSpace() else { throw fail("'\\b{' is not closed") }
        func isNameChar(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "-" }
        guard isNameChar(char) else {
            index = start
            return unicode ? .wordBoundary : .asciiWordBoundary
        }
        var name = ""
        while !isEOF, isNameChar(char) {
            name.unicodeScalars.append(char)
            _ = bumpAndSkipSpace()
        }
        guard !isEOF, char == "}" else { throw fail("'\\b{' is not closed") }
        index += 1
        switch name {
        case "start": return unicode ? .wordStart : .asciiWordStart
        case "end": return unicode ? .wordEnd : .asciiWordEnd
        case "start-half": return unicode ? .wordStartHalf : .asciiWordStartHalf
        case "end-half": return unicode ? .wordEndHalf : .asciiWordEndHalf
        default: throw fail("'\\b{\(name)}' is not a known word boundary")
        }
    }

    /// `\xHH`, `\uHHHH`, `\UHHHHHHHH` or `\x{H…}` (the cursor is at the letter).
    private mutating func parseHex() throws(RegexError) -> UInt32 {
        let digits = char == "x" ? 2 : char == "u" ? 4 : 8
        guard bumpAndSkipSpace() else { throw fail("a hexadecimal escape is not finished") }
        var hex = ""
        if char == "{" {
            while bumpAndSkipSpace(), char != "}" {
                guard char.properties.isASCIIHexDigit else { throw fail("'\(char)' is not a hexadecimal digit") }
                hex.unicodeScalars.append(char)
            }
            if isEOF { throw fail("a '{' of a hexadecimal escape is not closed") }
            _ = bumpAndSkipSpace()
            if hex.isEmpty { throw fail("a hexadecimal escape is empty") }
        } else {
            for position in 0..<digits {
                if position > 0, !bumpAndSkipSpace() { throw fail("a hexadecimal escape is not finished") }
                guard char.properties.isASCIIHexDigit else { throw fail("'\(char)' is not a hexadecimal digit") }
                hex.unicodeScalars.append(char)
            }
            _ = bumpAndSkipSpace()
        }
        guard let value = UInt32(hex, radix: 16), Unicode.Scalar(value) != nil else {
            throw fail("'\(hex)' is not a Unicode scalar value")
        }
        return value
    }

    /// `\d`, `\s`, `\w` and their negations: Unicode, or ASCII in `(?-u)` mode.
    private func perlClass(_ c: Unicode.Scalar) throws(RegexError) -> ScalarSet {
        let negated = ("A"..."Z").contains(c)
        let kind = negated ? Unicode.Scalar(c.value + 32)! : c
        guard flags.unicode else {
            if negated { throw fail("in (?-u) mode '\\\(c)' can match invalid UTF-8") }
            return kind == "d" ? UnicodeTables.asciiDigit : kind == "s" ? UnicodeTables.asciiSpace : UnicodeTables.asciiWord
        }
        let set = kind == "d" ? UnicodeTables.perlDigit : kind == "s" ? UnicodeTables.perlSpace : UnicodeTables.perlWord
        return negated ? set.inverted() : set
    }

    /// `\pL`, `\p{Greek}`, `\p{sc=Greek}`, `\P{…}`, `\p{gc!=L}` (the cursor is at `p` or `P`).
    private mutating func parseUnicodeClass() throws(RegexError) -> ScalarSet {
        var negated = char == "P"
        guard bumpAndSkipSpace() else { throw fail("a Unicode class has no name") }
        var query = ""
        if char == "{" {
            while bumpAndSkipSpace(), char != "}" { query.unicodeScalars.append(char) }
            if isEOF { throw fail("a '\\p{' is not closed") }
            index += 1
        } else {
            if char == "\\" { throw fail("a Unicode class name cannot be an escape") }
            query = String(char)
            _ = bumpAndSkipSpace()
        }
        guard flags.unicode else { throw fail("Unicode classes such as '\\p{\(query)}' are not allowed in (?-u) mode") }
        var name = query
        var value: String?
        for separator in ["!=", ":", "="] {
            if let range = query.firstRange(of: separator) {
                name = String(query[..<range.lowerBound])
                value = String(query[range.upperBound...])
                if separator == "!=" { negated.toggle() }
                break
            }
        }
        var set = try unicodeProperty(name: name, value: value)
        if flags.caseInsensitive { set = set.caseFolded(asciiOnly: false) }
        return negated ? set.inverted() : set
    }

    /// Resolves a Unicode class query as Rust's regex does (`canonical_binary`, then the by-value forms).
    private func unicodeProperty(name: String, value: String?) throws(RegexError) -> ScalarSet {
        let normalizedName = UnicodeTables.normalize(name)
        guard let value else {
            if !["cf", "sc", "lc"].contains(normalizedName), let property = UnicodeTables.propertyAliases[normalizedName] {
                if let set = UnicodeTables.binaryProperty(property) { return set }
                throw fail("'\(name)' is not a binary Unicode property")
            }
            if let category = UnicodeTables.generalCategoryAliases[normalizedName] ?? specialCategory(normalizedName),
                let set = UnicodeTables.generalCategory(category)
            {
                return set
            }
            if let script = UnicodeTables.scriptAliases[normalizedName], let set = UnicodeTables.scripts[script] { return set }
            throw fail("'\(name)' is not a known Unicode class")
        }
        let normalizedValue = UnicodeTables.normalize(value)
        switch UnicodeTables.propertyAliases[normalizedName] {
        case "General_Category":
            if let category = UnicodeTables.generalCategoryAliases[normalizedValue] ?? specialCategory(normalizedValue),
                let set = UnicodeTables.generalCategory(category)
            {
                return set
            }
        case "Script":
            if let script = UnicodeTables.scriptAliases[normalizedValue], let set = UnicodeTables.scripts[script] { return set }
        case "Script_Extensions":
            if let script = UnicodeTables.scriptAliases[normalizedValue], let set = UnicodeTables.scriptExtensions[script] {
                return set
            }
        case nil:
            throw fail("'\(name)' is not a known Unicode property")
        case let property?:
            throw fail("the Unicode property '\(property)' is not supported here")
        }
        throw fail("'\(value)' is not a known value of the Unicode property '\(name)'")
    }

    private func specialCategory(_ normalized: String) -> String? {
        ["any": "Any", "assigned": "Assigned", "ascii": "ASCII"][normalized]
    }
}
