import Foundation
import PlugboardFlags
import PlugboardStore

/// What `plugboard serve` needs from a board: reading flags and tokens, noticing changes, storing client usage.
///
/// ``PlugboardStore/Board`` conforms; tests may serve a board in memory the same way. The server never writes flag
/// definitions: nothing here can.
public protocol ServedBoard: Sendable {
    /// A value that changes whenever the board changes (cheap: it is polled every few tens of milliseconds).
    func version() throws(BoardError) -> BoardVersion
    /// The Unleash client-API feature set of one environment.
    func featureSet(environment: String) throws(BoardError) -> FeatureSet
    /// The digests and states of every API token.
    func apiTokenCredentials() throws(BoardError) -> [APITokenCredential]
    /// Stores a batch of client registrations and usage counts (unaudited telemetry).
    func recordClientUsage(registrations: [ClientRegistration], usage: [FlagUsageCount], tokensUsed: [String: Date]) throws(BoardError)
    /// Nil when the board is readable and its schema current; otherwise one sentence saying what is wrong.
    func healthProblem() -> String?
}

extension Board: ServedBoard {
    public func featureSet(environment: String) throws(BoardError) -> FeatureSet {
        try featureSet(environment: environment, requireExisting: false)
    }

    public func recordClientUsage(
        registrations: [ClientRegistration], usage: [FlagUsageCount], tokensUsed: [String: Date]
    ) throws(BoardError) {
        try recordClientUsage(registrations: registrations, usage: usage, tokensUsed: tokensUsed, now: Date())
    }

    public func healthProblem() -> String? {
        do {
            _ = try version()
            let status = try migrationStatus()
            try status.checkCompatible()
            if !status.pending.isEmpty { return "the board has \(status.pending.count) pending migration(s); run plugboard migrate" }
            return nil
        } catch {
            return error.message
        }
    }
}
