/// A version whose trailing components may be wildcards or missing: `1`, `1.2`, `1.x`, `*`, `1.2.3-beta`.
///
/// `nil` stands for `x`, `X`, `*` or a missing component; once one component is `nil`, the later ones are too.
/// Only a full version (all three numbers) can carry pre-release identifiers; build metadata is dropped.
struct PartialVersion: Sendable, Hashable {
    var major: UInt64?
    var minor: UInt64?
    var patch: UInt64?
    var prerelease: [String] = []
}

/// One term of a comparator set, before desugaring.
enum RangeTerm: Sendable, Hashable {
    /// `1.2.3`, `=1.2.x`, `>=1.2`, `<2`, `*`: an operator (or none) and a partial version.
    case primitive(Comparator.Operator?, PartialVersion)
    /// `~1.2.3` or `~>1.2.3`.
    case tilde(PartialVersion)
    /// `^1.2.3`.
    case caret(PartialVersion)
    /// `1.2.3 - 2.3.4`: always a whole comparator set on its own.
    case hyphen(PartialVersion, PartialVersion)
}

/// Parses the text of a ``VersionRange`` into comparator sets of ``RangeTerm``s, strictly.
///
/// Every error is a ``VersionError`` whose message starts with `'TEXT' is not a valid version range:`.
struct RangeParser {
    /// The range exactly as given, named in every error.
    let text: String

    /// The `||`-separated comparator sets, each a list of terms that are AND-ed.
    func parse() throws(VersionError) -> [[RangeTerm]] {
        let trimmed = text.trimmingRangeWhitespace()
        guard !trimmed.isEmpty else { throw failure("it is empty") }
        var sets: [[RangeTerm]] = []
        for alternative in trimmed.split(separator: "||", omittingEmptySubsequences: false) {
            let tokens = alternative.split(whereSeparator: \.isRangeWhitespace)
            guard !tokens.isEmpty else { throw failure("'||' must have a comparator set on each side") }
            sets.append(try parseSet(tokens, alternative.trimmingRangeWhitespace()))
        }
        return sets
    }

    private func failure(_ problem: String) -> VersionError {
        VersionError("'\(text)' is not a valid version range: \(problem)")
    }

    private func parseSet(_ tokens: [Substring], _ alternative: Substring) throws(VersionError) -> [RangeTerm] {
        if tokens.contains("-") {
            guard tokens.count == 3, tokens[1] == "-" else {
                throw failure("a hyphen range is 'A - B' alone, with one version on each side, but '\(alternative)' is not")
            }
            for end in [tokens[0], tokens[2]] where end.first?.isRangeOperatorCharacter == true {
                throw failure("the ends of a hyphen range are plain versions, but '\(end)' has an operator")
            }
            return [.hyphen(try parsePartial(tokens[0]), try parsePartial(tokens[2]))]
        }
        var terms: [RangeTerm] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            var (prefix, rest) = try splitOperator(token)
            if rest.isEmpty {
                // `>= 1.2.3`: the version follows after whitespace.
                guard index < tokens.count, tokens[index].first?.isRangeOperatorCharacter == false else {
                    throw failure("'\(token)' is not followed by a version")
                }
                rest = tokens[index]
                index += 1
            }
            let version = try parsePartial(rest)
            switch prefix {
            case .primitive(let op): terms.append(.primitive(op, version))
            case .tilde: terms.append(.tilde(version))
            case .caret: terms.append(.caret(version))
            }
        }
        return terms
    }

    private enum Prefix {
        case primitive(Comparator.Operator?)
        case tilde
        case caret
    }

    /// Splits a leading operator (`<`, `<=`, `>`, `>=`, `=`, `~`, `~>`, `^`, or none) off a token.
    private func splitOperator(_ token: Substring) throws(VersionError) -> (Prefix, Substring) {
        let operators: [(String, Prefix)] = [
            ("<=", .primitive(.lessOrEqual)), (">=", .primitive(.greaterOrEqual)), ("~>", .tilde),
            ("<", .primitive(.less)), (">", .primitive(.greater)), ("=", .primitive(.equal)),
            ("~", .tilde), ("^", .caret),
        ]
        var prefix = Prefix.primitive(nil)
        var rest = token
        if let (spelling, match) = operators.first(where: { token.hasPrefix($0.0) }) {
            prefix = match
            rest = token.dropFirst(spelling.count)
        }
        if rest.first?.isRangeOperatorCharacter == true {
            let spelled = token.prefix(while: \.isRangeOperatorCharacter)
            throw failure("'\(spelled)' is not an operator (use <, <=, >, >=, =, ~, ~> or ^)")
        }
        return (prefix, rest)
    }

    /// Parses `1`, `1.2`, `1.2.3`, `1.x`, `*`, `1.2.3-beta.1+build` and the like.
    private func parsePartial(_ token: Substring) throws(VersionError) -> PartialVersion {
        if token.first == "v" || token.first == "V" {
            throw failure("'\(token)' starts with 'v'; write the version without it")
        }
        let suffixStart = token.firstIndex { $0 == "-" || $0 == "+" } ?? token.endIndex
        let core = token[..<suffixStart]
        guard !core.isEmpty else { throw failure("'\(token)' is not a version") }
        let parts = core.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 3 else {
            throw failure("'\(token)' has more than three components")
        }
        var numbers: [UInt64?] = []
        for part in parts {
            if part == "x" || part == "X" || part == "*" {
                numbers.append(nil)
                continue
            }
            guard !part.isEmpty else { throw failure("'\(token)' has an empty component") }
            guard part.allSatisfy(\.isASCIIDigit) else {
                throw failure("'\(token)' is not a version: '\(part)' is not a number, 'x' or '*'")
            }
            guard part == "0" || part.first != "0" else {
                throw failure("'\(token)' has a leading zero in '\(part)'")
            }
            guard let number = UInt64(part) else {
                throw failure("'\(token)' has a component too large for a 64-bit number: '\(part)'")
            }
            guard !numbers.contains(nil) else {
                throw failure("'\(token)' has a number after a wildcard")
            }
            numbers.append(number)
        }
        while numbers.count < 3 { numbers.append(nil) }
        var version = PartialVersion(major: numbers[0], minor: numbers[1], patch: numbers[2])
        guard suffixStart < token.endIndex else { return version }

        guard version.patch != nil else {
            throw failure("'\(token)' has a pre-release or build suffix, which needs a full MAJOR.MINOR.PATCH version")
        }
        var suffix = token[suffixStart...]
        if suffix.first == "-" {
            let buildStart = suffix.firstIndex(of: "+") ?? suffix.endIndex
            let prerelease = suffix[suffix.index(after: suffix.startIndex)..<buildStart]
            for identifier in prerelease.split(separator: ".", omittingEmptySubsequences: false) {
                if let problem = SemanticVersion.prereleaseProblem(identifier) {
                    throw failure("in '\(token)', \(problem)")
                }
                version.prerelease.append(String(identifier))
            }
            suffix = suffix[buildStart...]
        }
        if suffix.first == "+" {
            for identifier in suffix.dropFirst().split(separator: ".", omittingEmptySubsequences: false) {
                if let problem = SemanticVersion.buildProblem(identifier) {
                    throw failure("in '\(token)', \(problem)")
                }
            }
        }
        return version
    }
}

extension Character {
    /// The whitespace that separates comparators: space, tab, carriage return, line feed.
    var isRangeWhitespace: Bool { self == " " || self == "\t" || self == "\n" || self == "\r" || self == "\r\n" }
    /// A character that can begin an operator.
    var isRangeOperatorCharacter: Bool { self == "<" || self == ">" || self == "=" || self == "~" || self == "^" }
}

extension StringProtocol {
    /// The text without leading and trailing ``Character/isRangeWhitespace`` characters.
    func trimmingRangeWhitespace() -> SubSequence {
        let start = firstIndex { !$0.isRangeWhitespace } ?? endIndex
        let end = lastIndex { !$0.isRangeWhitespace }.map(index(after:)) ?? start
        return self[start..<end]
    }
}
