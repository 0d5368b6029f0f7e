import PlugboardMacros

/// One advisory as `plugboard advisory list` shows it.
@MemberwiseInit(.package)
public struct AdvisorySummary: Sendable, Hashable, Codable {
    /// The advisory's id.
    public let id: String
    /// Other ids of the same vulnerability (CVE, GHSA).
    public let aliases: [String]
    public let summary: String?
    public let severity: AdvisorySeverity
    /// The plug-ins it names, sorted.
    public let plugins: [String]
    /// The registered releases it affects (`id@version`), sorted.
    public let affecting: [String]
    /// When it was withdrawn (by its publisher or on this board); nil while it stands.
    public let withdrawn: String?
    public let modified: String
    /// Where it came from: `file NAME` for an import.
    public let source: String
}

/// What an advisory affects in one plug-in: its ranges, and the registered versions they cover.
@MemberwiseInit(.package)
public struct AdvisoryPlugin: Sendable, Hashable, Codable {
    public let pluginID: String
    public let ranges: [AdvisoryRange]
    /// The registered versions of the plug-in the ranges cover, highest first.
    public let affectedVersions: [String]
}

/// An advisory's action in one environment, and why it is that one.
@MemberwiseInit(.package)
public struct AdvisoryEnvironmentAction: Sendable, Hashable, Codable {
    public let environment: String
    /// What hosts there do: the action chosen for the advisory there (else its severity's), raised to the
    /// environment's floor.
    public let action: AdvisoryAction
    /// The action chosen for this advisory in this environment, if any (`plugboard advisory set-action`).
    public let chosen: AdvisoryAction?
    /// The environment's floor (`plugboard policy set --advisories`), if any.
    public let floor: AdvisoryAction?
}

/// One advisory as `plugboard advisory show` shows it.
@MemberwiseInit(.package)
public struct AdvisoryDetail: Sendable, Hashable, Codable {
    public let id: String
    public let aliases: [String]
    public let summary: String?
    public let severity: AdvisorySeverity
    public let published: String?
    public let modified: String
    /// When it was withdrawn (by its publisher or on this board); nil while it stands.
    public let withdrawn: String?
    /// Who withdrew it on this board, and why.
    public let withdrawnBy: String?
    public let withdrawReason: String?
    public let source: String
    public let importedAt: String
    public let importedBy: String
    /// What it affects, by plug-in.
    public let plugins: [AdvisoryPlugin]
    /// Its action in every environment of the board (none while it is withdrawn).
    public let actions: [AdvisoryEnvironmentAction]
}
