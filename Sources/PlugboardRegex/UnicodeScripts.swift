/// The Unicode script of a scalar (Unicode 16.0, the data of the regular expressions' `\p{Script}`), for telling apart
/// names that mix scripts, where one letter can pass for another (Latin `a` and Cyrillic `а`).
public enum UnicodeScripts {
    /// Every assigned range with its script's canonical name, sorted by its first code point.
    private static let ranges: [(range: ClosedRange<UInt32>, script: String)] = UnicodeTables.scripts
        .flatMap { name, set in set.ranges.map { (range: $0, script: name) } }
        .sorted { $0.range.lowerBound < $1.range.lowerBound }

    /// The script of `scalar` by its canonical name (`Latin`, `Greek`, `Han`, and `Common` for digits, punctuation and
    /// symbols, `Inherited` for combining marks), or `Unknown` for a code point no script holds.
    public static func script(of scalar: Unicode.Scalar) -> String {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].range.upperBound < scalar.value {
                low = middle + 1
            } else if ranges[middle].range.lowerBound > scalar.value {
                high = middle
            } else {
                return ranges[middle].script
            }
        }
        return "Unknown"
    }

    /// The scripts of `text`'s letters that could pass for letters of another script: every script of its scalars but
    /// `Common` and `Inherited`, with the combinations a single writing system uses together counted as one
    /// (Unicode's "highly restrictive" profile of UTS #39: Latin with Han, Hiragana and Katakana; Latin with Han and
    /// Bopomofo; Latin with Han and Hangul). Returns the scripts, sorted, when `text` mixes scripts, else `nil`.
    public static func mixedScripts(in text: String) -> [String]? {
        var found = Set<String>()
        for scalar in text.unicodeScalars {
            let script = script(of: scalar)
            if script != "Common", script != "Inherited" { found.insert(script) }
        }
        guard found.count > 1 else { return nil }
        let allowed: [Set<String>] = [
            ["Latin", "Han", "Hiragana", "Katakana"], ["Latin", "Han", "Bopomofo"], ["Latin", "Han", "Hangul"],
        ]
        return allowed.contains { found.isSubset(of: $0) } ? nil : found.sorted()
    }
}
