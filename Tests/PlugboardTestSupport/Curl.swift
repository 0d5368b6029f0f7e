import Foundation

/// curl as a test's HTTP client: a real client in a process of its own.
public enum Curl {
    /// Runs `/usr/bin/curl -s -D - ARGUMENTS` (60 s at most) and returns the status, the response headers and the body.
    public static func run(_ arguments: [String]) async throws -> (status: Int, headers: String, body: String) {
        do {
            let text = try await Spawned.run("/usr/bin/curl", ["-s", "-D", "-", "--max-time", "60"] + arguments).text.stdout
            // An interim answer (100 Continue) comes first: the last block of headers is the answer's.
            var parts = text.components(separatedBy: "\r\n\r\n")
            while parts.count > 1, parts[0].hasPrefix("HTTP/"), parts[1].hasPrefix("HTTP/") { parts.removeFirst() }
            let headers = parts.first ?? ""
            let status = Int(headers.split(separator: " ").dropFirst().first ?? "") ?? 0
            return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
    }
}
