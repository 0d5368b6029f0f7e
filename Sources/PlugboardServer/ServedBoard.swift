package import Foundation
package import PlugboardFlags
package import PlugboardModel
public import PlugboardStore

/// What `plugboard serve` needs from a board: reading flags and tokens, noticing changes, storing client usage.
///
/// ``PlugboardStore/Board`` conforms; tests may serve a board in memory the same way. The server never writes flag
/// definitions: nothing here can.
package protocol ServedBoard: Sendable {
    /// A value that changes whenever the board changes (cheap: it is polled every few tens of milliseconds).
    func version() throws(BoardError) -> BoardVersion
    /// The Unleash client-API feature set of one environment.
    func featureSet(environment: String) throws(BoardError) -> FeatureSet
    /// The digests and states of every API token.
    func apiTokenCredentials() throws(BoardError) -> [APITokenCredential]
    /// Stores a batch of client registrations and usage counts (telemetry: the telemetry file, not the board).
    func recordClientUsage(registrations: [ClientRegistration], usage: [FlagUsageCount], tokensUsed: [String: Date]) throws(BoardError)
    /// Nil when the board is readable and its schema current; otherwise one sentence saying what is wrong.
    func healthProblem() -> String?
    /// What a remote host of `environment` needs to decide, with the audit head that proves it (see
    /// ``PlugboardStore/Board/hostView(environment:relevantTo:)``).
    func hostView(environment: String, relevantTo: Set<String>) throws(BoardError) -> (view: HostView, head: AuditCheckpoint?)
    /// The ids of every registered plug-in (a host snapshot depends on no other id a host names).
    func registeredPluginIDs() throws(BoardError) -> Set<String>
    /// The file of the artifact of a release of a plug-in enabled in `environment` (see
    /// ``PlugboardStore/Board/isArtifact(sha256:enabledIn:)``); nil when no such release has this digest.
    func artifactFile(sha256: String, environment: String) throws(BoardError) -> String?
    /// Stores a batch of remote hosts' load reports (telemetry); a host id that reports from another environment keeps
    /// its rows and the report is counted as dropped.
    func writeLoadReports(_ reports: [LoadReport]) throws(BoardError)
    /// The environment a host id last reported from (nil: never).
    func reportingEnvironment(hostID: String) throws(BoardError) -> String?
    /// Adds counts of telemetry the server dropped, by why (``PlugboardStore/TelemetryDrop/Kind``).
    func recordTelemetryDrops(_ counts: [String: Int]) throws(BoardError)
}

extension Board: ServedBoard {
    package func featureSet(environment: String) throws(BoardError) -> FeatureSet {
        try featureSet(environment: environment, requireExisting: false)
    }

    package func recordClientUsage(
        registrations: [ClientRegistration], usage: [FlagUsageCount], tokensUsed: [String: Date]
    ) throws(BoardError) {
        try recordClientUsage(registrations: registrations, usage: usage, tokensUsed: tokensUsed, now: Date())
    }

    package func artifactFile(sha256: String, environment: String) throws(BoardError) -> String? {
        try isArtifact(sha256: sha256, enabledIn: environment) ? ArtifactStore(root: artifactsPath).path(forSHA256: sha256) : nil
    }

    package func healthProblem() -> String? {
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
