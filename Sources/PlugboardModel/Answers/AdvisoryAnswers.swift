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

/// One host that reported running a release an advisory affects (`plugboard advisory exposure`).
@MemberwiseInit(.package)
public struct ExposedHost: Sendable, Hashable, Codable {
    /// The host's id, as it reports it.
    public let hostID: String
    /// The host's API version, as it reported it.
    public let hostVersion: String
    /// The release it runs.
    public let version: String
    /// The standing advisories that affect the release, strictest first.
    public let advisories: [String]
    /// The strictest of their actions in the host's environment.
    public let action: AdvisoryAction
    /// When the host reported it.
    public let reportedAt: String
}

/// One plug-in in one environment whose affected releases hosts run, and the fix: `plugboard advisory exposure`.
@MemberwiseInit(.package)
public struct AdvisoryExposure: Sendable, Hashable, Codable {
    /// The environment the hosts reported from.
    public let environment: String
    /// The plug-in whose affected releases they run.
    public let pluginID: String
    /// The hosts of the environment that reported running an affected release of the plug-in, by host id.
    public let hosts: [ExposedHost]
    /// The lowest registered release above the affected ones they run that no standing advisory affects, that is neither
    /// yanked nor killed, whose host range contains every reporting host's API version there and that every dependent's
    /// dependency range contains; when no release above fits, the highest one below that does. Nil when none fits.
    public let fix: String?
    /// Whether ``fix`` is lower than a release the hosts run (going back, not forward).
    public let fixIsLower: Bool
    /// The command that makes the hosts take the fix: `plugboard plugin pin …` or `plugboard rollout start …`.
    public let command: String?
    /// Whether the environment is protected, so that ``command`` opens a change request instead of applying at once.
    public let opensChangeRequest: Bool
    /// Why no release fits, when ``fix`` is nil; or what else to know of the command.
    public let note: String?
}
