import PlugboardRegex

/// Validators for the names used across the board. Each throws a ``BoardError`` with code
/// `.invalidInput` whose message names the value and the rule.
public enum Validate {
    /// A plug-in id: reverse-DNS, lower case, at least two dot-separated labels, for example `com.example.calendar`.
    ///
    /// Each label is 1–63 characters of `a-z`, `0-9`, `-` and `_`, starts with a letter or digit and does
    /// not end with `-`; the first label starts with a letter; the whole id is at most 255 characters.
    public static func pluginID(_ id: String, field: String = "plug-in id") throws(BoardError) {
        func fail(_ why: String) -> BoardError {
            .invalid("\(field) '\(printable(id))' is not valid: \(why); use a lower-case reverse-DNS id such as com.example.calendar")
        }
        guard !id.isEmpty else { throw fail("it is empty") }
        guard id.utf8.count <= 255 else { throw fail("it is longer than 255 characters") }
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { throw fail("it needs at least two dot-separated labels") }
        for (index, label) in labels.enumerated() {
            guard !label.isEmpty else { throw fail("it has an empty label") }
            guard label.utf8.count <= 63 else { throw fail("the label '\(label)' is longer than 63 characters") }
            guard label.utf8.allSatisfy({ isLowerAlnum($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
                throw fail("the label '\(printable(String(label)))' may contain only a-z, 0-9, '-' and '_'")
            }
            guard let first = label.utf8.first, isLowerAlnum(first), label.utf8.last != UInt8(ascii: "-") else {
                throw fail("the label '\(label)' must start with a letter or digit and not end with '-'")
            }
            if index == 0, !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) {
                throw fail("the first label must start with a letter")
            }
        }
    }

    /// An environment name: 1–63 characters of `a-z`, `0-9`, `-`, `_`, starting with a letter.
    public static func environment(_ name: String) throws(BoardError) {
        try lowercaseName(name, "environment", example: "production")
    }

    /// A name of 1-63 characters of a-z, 0-9, '-' and '_', starting with a letter; `what` and `example` name it in the
    /// refusal.
    private static func lowercaseName(_ name: String, _ what: String, example: String) throws(BoardError) {
        guard !name.isEmpty, name.utf8.count <= 63,
            let first = name.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
            name.utf8.allSatisfy({ isLowerAlnum($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
        else {
            throw .invalid(
                "\(what) '\(printable(name))' is not valid: use 1-63 characters of a-z, 0-9, '-' and '_', starting with a letter (for example \(example))"
            )
        }
    }

    /// A principal group's name (who approves change requests, `plugboard group`): 1-63 characters of a-z, 0-9, '-' and
    /// '_', starting with a letter, and none of the names an approval policy gives who approves with (`default`,
    /// `admins`, `owners`).
    public static func groupName(_ name: String) throws(BoardError) {
        try lowercaseName(name, "group", example: "release-managers")
        guard !["default", "admins", "owners"].contains(name) else {
            throw .invalid(
                "'\(name)' names who approves without a group (plugboard policy set --approvers \(name)); choose another group name")
        }
    }

    /// A flag name as a board holds it: 1–255 characters with no whitespace and none of the characters
    /// ``isUnsafe(_:)`` names (Unleash allows UTF-8 names). Every command that looks a flag up checks this much, so a
    /// flag a board already holds can always be switched off, shown and archived; a name given to a new flag must also
    /// pass ``newFlagName(_:field:)``.
    package static func flagName(_ name: String, field: String = "flag name") throws(BoardError) {
        guard !name.isEmpty, name.utf8.count <= 255,
            !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || isUnsafe($0) })
        else {
            throw .invalid(
                "\(field) '\(printable(name))' is not valid: use 1-255 characters without spaces, control or invisible characters, for example checkout.new-flow"
            )
        }
    }

    /// A name for a new flag (created, imported, or named as a manifest's `gate`): a ``flagName(_:field:)`` whose letters
    /// are of one script. Digits, punctuation and symbols go with any script, as do the scripts one writing system uses
    /// together (Latin with Han, Kana, Bopomofo or Hangul); a name that mixes others, such as Latin with Cyrillic or
    /// Greek, is refused, because a manifest names its gate flag by name and `pаy.gate` with a Cyrillic `а` would pass
    /// for `pay.gate`.
    package static func newFlagName(_ name: String, field: String = "flag name") throws(BoardError) {
        try flagName(name, field: field)
        if let scripts = UnicodeScripts.mixedScripts(in: name) {
            throw .invalid(
                "\(field) '\(printable(name))' is not valid: it mixes letters of the \(scripts.joined(separator: ", ")) scripts, which can pass for one another; use letters of one script"
            )
        }
    }

    /// A rollout's stickiness: `default`, `userId`, `sessionId`, `random` or a context field name (1–255 characters,
    /// no spaces, control or invisible characters).
    public static func stickiness(_ stickiness: String) throws(BoardError) {
        guard !stickiness.isEmpty, stickiness.count <= 255,
            !stickiness.unicodeScalars.contains(where: { $0.properties.isWhitespace || isUnsafe($0) })
        else {
            throw .invalid(
                "--stickiness '\(printable(stickiness))' is not valid: use default, userId, sessionId, random or a context field name without spaces, control or invisible characters"
            )
        }
    }

    /// A principal: an OS user name or a declared automation identity; 1–128 characters of
    /// `A-Z a-z 0-9 . _ @ + - : /`, not starting with `-`.
    public static func principal(_ name: String, field: String = "principal") throws(BoardError) {
        let allowed: (UInt8) -> Bool = {
            isLowerAlnum($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                || "._@+-:/$".utf8.contains($0)
        }
        guard !name.isEmpty, name.utf8.count <= 128, name.utf8.allSatisfy(allowed), !name.hasPrefix("-") else {
            throw .invalid(
                "\(field) '\(printable(name))' is not valid: use 1-128 characters of letters, digits and . _ @ + - : / (for example alice or ci-bot@example.com)"
            )
        }
    }

    /// The prefix of the principals Plugboard acts as itself (`plugboard/rollout-guard`, `plugboard/rollout-schedule`):
    /// reserved, so that no person's token, role or `--as` can pass for Plugboard in the audit log.
    public static let reservedPrincipalPrefix = "plugboard/"

    /// A principal named by a person (a token's principal, an admin or owner added, `--as`): ``principal(_:field:)``,
    /// and not one of the names Plugboard acts as (anything under ``reservedPrincipalPrefix``, in any case).
    public static func personPrincipal(_ name: String, field: String = "principal") throws(BoardError) {
        try principal(name, field: field)
        if name.lowercased().hasPrefix(reservedPrincipalPrefix) {
            throw .invalid(
                "\(field) '\(printable(name))' is reserved: names under \(reservedPrincipalPrefix) are the principals Plugboard itself acts as; choose another name"
            )
        }
    }

    /// A reason given for a kill switch, yank or revive: non-empty, at most 1000 characters, no control characters.
    public static func reason(_ text: String) throws(BoardError) {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw .invalid("the reason is empty: say why, for example --reason \"crashes on start (INC-123)\"") }
        guard text.count <= 1000 else { throw .invalid("the reason is longer than 1000 characters") }
        guard !text.unicodeScalars.contains(where: isUnsafe) else {
            throw .invalid(
                "the reason '\(printable(text))' contains control, bidirectional or invisible characters; use a single line of plain text")
        }
    }

    /// A host id as operators type it: 1 to 255 bytes (the bounds `plugboard serve` puts on a reported host id) of one
    /// line of plain text, none of the characters ``isUnsafe(_:)`` names.
    package static func hostID(_ id: String) throws(BoardError) {
        guard !id.isEmpty, id.utf8.count <= 255 else { throw .invalid("a host id has 1 to 255 bytes") }
        try name(id, field: "the host id", limit: 255)
    }

    /// Free text that may span lines (descriptions): at most `limit` characters; newlines and tabs, but no other
    /// control characters and no bidirectional overrides or invisible characters.
    package static func text(_ text: String, field: String, limit: Int) throws(BoardError) {
        guard text.count <= limit else { throw .invalid("\(field) is longer than \(limit) characters") }
        guard !text.unicodeScalars.contains(where: { isUnsafe($0) && $0 != "\n" && $0 != "\t" }) else {
            throw .invalid("\(field) contains control, bidirectional or invisible characters; remove them")
        }
    }

    /// A name shown on one line (a plug-in's name): at most `limit` characters and none of the characters
    /// ``isUnsafe(_:)`` names, so that it can neither break a table row nor reorder or hide what a terminal shows.
    package static func name(_ text: String, field: String, limit: Int) throws(BoardError) {
        guard text.count <= limit else { throw .invalid("\(field) is longer than \(limit) characters") }
        guard !text.unicodeScalars.contains(where: isUnsafe) else {
            throw .invalid(
                "\(field) '\(printable(text))' contains control, bidirectional or invisible characters; use a single line of plain text")
        }
    }

    /// True for the characters that must not appear where an identifier or a name is expected, because a terminal
    /// would act on them or hide them: C0 and C1 controls and DEL (including newline and tab), line and paragraph
    /// separators, bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E–U+200F,
    /// U+202A–U+202E, U+2066–U+2069), zero-width characters (U+200B–U+200D, U+2060) and the byte order mark U+FEFF.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200B...0x200F, 0x2028...0x202E, 0x2060, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }

    /// `value` with every character ``isUnsafe(_:)`` names written as an escape (`\n`, `\t`, `\r`, `\u{202e}`),
    /// so that it prints as exactly one line and shows what it holds.
    public static func escaped(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: isUnsafe) else { return value }
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where isUnsafe(scalar): result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Escapes control and invisible characters (see ``escaped(_:)``) so that a value can be shown inside an error message.
    package static func printable(_ value: String) -> String {
        escaped(value.count > 80 ? String(value.prefix(77)) + "..." : value)
    }

    private static func isLowerAlnum(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

extension String {
    package var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
