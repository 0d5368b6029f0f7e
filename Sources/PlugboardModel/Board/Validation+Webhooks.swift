import Foundation

extension Validate {
    /// A webhook endpoint's name: 1-64 letters, digits, `.`, `_` and `-`.
    public static func webhookName(_ name: String) throws(BoardError) {
        let allowed = name.unicodeScalars.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0))
        }
        guard (1...64).contains(name.utf8.count), allowed else {
            throw BoardError(.invalidInput, "a webhook's name must be 1-64 letters, digits, '.', '_' or '-' (got \(escaped(name)))")
        }
    }

    /// A webhook's events filter: comma-separated actions, `group.*` patterns or `*`, at most 1024 characters.
    public static func webhookEvents(_ events: String) throws(BoardError) {
        let patterns = events.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let valid = patterns.allSatisfy { pattern in
            !pattern.isEmpty && pattern.utf8.count <= 64
                && pattern.unicodeScalars.allSatisfy {
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-*".unicodeScalars.contains($0))
                }
                && (!pattern.contains("*") || pattern == "*" || (pattern.hasSuffix(".*") && pattern.filter { $0 == "*" }.count == 1))
        }
        guard !events.isEmpty, events.utf8.count <= 1024, valid else {
            throw BoardError(
                .invalidInput,
                "--events takes actions separated by commas, each exact (plugin.kill), a group (change.*) or * (got \(escaped(events)))")
        }
    }
}
