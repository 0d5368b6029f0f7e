import Foundation
public import PlugboardModel

/// `--steps 1,10,50,100`: the percentages of hosts of each step, as a list (the plan's rules on them are the
/// rollout's).
public struct RolloutSteps: BoardField, Hashable {
    /// The percentages, in order.
    public let percents: [Int]
    public init(validating text: String) throws(BoardError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let steps = parts.compactMap { Int($0) }
        guard text.utf8.count <= 200, steps.count == parts.count, !steps.isEmpty else {
            throw BoardError(
                .invalidInput,
                "--steps '\(Validate.escaped(String(text.prefix(200))))' is not a list of percentages: use for example 1,10,50,100")
        }
        percents = steps
    }
    public var description: String { percents.map(String.init).joined(separator: ",") }
}

/// `--every 30s|10m|1h|1d`: how long each step of a rollout lasts, from 1 second to 365 days.
public struct StepInterval: BoardField, Hashable {
    /// The length in seconds.
    public let seconds: Int
    public init(validating text: String) throws(BoardError) {
        guard let seconds = OperationParse.duration(text, units: "smhd"), seconds <= 31_536_000 else {
            throw BoardError(
                .invalidInput,
                "--every '\(Validate.escaped(String(text.prefix(40))))' is not a duration from 1 second to 365 days: use for example 30s, 10m, 1h or 1d"
            )
        }
        self.seconds = Int(seconds)
    }
    /// In the largest unit that divides it: `1d`, `6h`, `10m`, `45s`.
    public var description: String { Self.text(seconds) }

    /// `seconds` in the largest unit that divides it.
    package static func text(_ seconds: Int) -> String {
        if seconds % 86400 == 0 { return "\(seconds / 86400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}

/// `--max-failure-rate 5` or `2.5`: a percentage of hosts from 0 to 100 with at most two decimals.
public struct FailureRate: BoardField, Hashable {
    /// The rate in basis points (500 = 5%).
    public let basisPoints: Int
    public init(validating text: String) throws(BoardError) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 6, parts.count <= 2,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            parts.count == 1 || parts[1].count <= 2, let value = Double(text), (0...100).contains(value)
        else {
            throw BoardError(
                .invalidInput,
                "--max-failure-rate '\(Validate.escaped(String(text.prefix(40))))' is not a percentage from 0 to 100 (for example 5 or 2.5)"
            )
        }
        basisPoints = Int((value * 100).rounded())
    }
    /// The percentage: `5`, `2.5`, `0.25`.
    public var description: String {
        let hundredths = basisPoints % 100
        guard hundredths != 0 else { return String(basisPoints / 100) }
        let decimals = hundredths % 10 == 0 ? String(hundredths / 10) : (hundredths < 10 ? "0\(hundredths)" : String(hundredths))
        return "\(basisPoints / 100).\(decimals)"
    }
}
