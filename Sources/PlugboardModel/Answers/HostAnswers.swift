import Foundation
import PlugboardFlags
import PlugboardVersioning

/// A stored load report line with the host that wrote it.
public struct HostLoadStatus: Sendable, Hashable, Codable {
    public let hostID: String
    public let environment: String
    public let hostVersion: String
    /// Where the host read the board: nil when it opened the board file, otherwise a phrase such as
    /// `served (token NAME)` or `a cached snapshot of TIME (…)`.
    public let source: String?
    public let pluginID: String
    public let version: String?
    public let state: LoadReportEntry.State
    public let reasonCode: String?
    public let reason: String?
    /// A problem the host loaded the plug-in despite (a signature problem under `warn`).
    public let warning: String?
    /// The signature level of the reported version as the board sees it now (nil when no version is reported).
    public let signature: SignatureState?
    public let reportedAt: String
    /// How often the reported version crashed the host within its crash window (nil: not at all).
    public let crashes: Int?

    /// A value with each stored property given.
    package init(
        hostID: String, environment: String, hostVersion: String, source: String?, pluginID: String, version: String?,
        state: LoadReportEntry.State, reasonCode: String?, reason: String?, warning: String?, signature: SignatureState?,
        reportedAt: String, crashes: Int?
    ) {
        self.hostID = hostID
        self.environment = environment
        self.hostVersion = hostVersion
        self.source = source
        self.pluginID = pluginID
        self.version = version
        self.state = state
        self.reasonCode = reasonCode
        self.reason = reason
        self.warning = warning
        self.signature = signature
        self.reportedAt = reportedAt
        self.crashes = crashes
    }
}

/// One environment's signature policy.
public struct EnvironmentSignaturePolicy: Sendable, Hashable, Codable {
    public let environment: String
    public let signatures: SignaturePolicy
    /// When the policy was last set (nil: never set, so `off`).
    public let updatedAt: String?
    public let updatedBy: String?

    /// A value with each stored property given.
    package init(environment: String, signatures: SignaturePolicy, updatedAt: String?, updatedBy: String?) {
        self.environment = environment
        self.signatures = signatures
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
    }
}
