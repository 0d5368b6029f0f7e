/// One advisory as `plugboard advisory list` shows it.
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

    /// A value with each stored property given.
    package init(
        id: String, aliases: [String], summary: String?, severity: AdvisorySeverity, plugins: [String], affecting: [String],
        withdrawn: String?, modified: String, source: String
    ) {
        self.id = id
        self.aliases = aliases
        self.summary = summary
        self.severity = severity
        self.plugins = plugins
        self.affecting = affecting
        self.withdrawn = withdrawn
        self.modified = modified
        self.source = source
    }
}

/// What an advisory affects in one plug-in: its ranges, and the registered versions they cover.
public struct AdvisoryPlugin: Sendable, Hashable, Codable {
    public let pluginID: String
    public let ranges: [AdvisoryRange]
    /// The registered versions of the plug-in the ranges cover, highest first.
    public let affectedVersions: [String]

    /// A value with each stored property given.
    package init(pluginID: String, ranges: [AdvisoryRange], affectedVersions: [String]) {
        self.pluginID = pluginID
        self.ranges = ranges
        self.affectedVersions = affectedVersions
    }
}

/// An advisory's action in one environment, and why it is that one.
public struct AdvisoryEnvironmentAction: Sendable, Hashable, Codable {
    public let environment: String
    /// What hosts there do: the action chosen for the advisory there (else its severity's), raised to the
    /// environment's floor.
    public let action: AdvisoryAction
    /// The action chosen for this advisory in this environment, if any (`plugboard advisory set-action`).
    public let chosen: AdvisoryAction?
    /// The environment's floor (`plugboard policy set --advisories`), if any.
    public let floor: AdvisoryAction?

    /// A value with each stored property given.
    package init(environment: String, action: AdvisoryAction, chosen: AdvisoryAction?, floor: AdvisoryAction?) {
        self.environment = environment
        self.action = action
        self.chosen = chosen
        self.floor = floor
    }
}

/// One advisory as `plugboard advisory show` shows it.
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

    /// A value with each stored property given.
    package init(
        id: String, aliases: [String], summary: String?, severity: AdvisorySeverity, published: String?, modified: String,
        withdrawn: String?, withdrawnBy: String?, withdrawReason: String?, source: String, importedAt: String, importedBy: String,
        plugins: [AdvisoryPlugin], actions: [AdvisoryEnvironmentAction]
    ) {
        self.id = id
        self.aliases = aliases
        self.summary = summary
        self.severity = severity
        self.published = published
        self.modified = modified
        self.withdrawn = withdrawn
        self.withdrawnBy = withdrawnBy
        self.withdrawReason = withdrawReason
        self.source = source
        self.importedAt = importedAt
        self.importedBy = importedBy
        self.plugins = plugins
        self.actions = actions
    }
}

/// One host that reported running a release an advisory affects (`plugboard advisory exposure`).
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

    /// A value with each stored property given.
    package init(hostID: String, hostVersion: String, version: String, advisories: [String], action: AdvisoryAction, reportedAt: String) {
        self.hostID = hostID
        self.hostVersion = hostVersion
        self.version = version
        self.advisories = advisories
        self.action = action
        self.reportedAt = reportedAt
    }
}

/// One plug-in in one environment whose affected releases hosts run, and the fix: `plugboard advisory exposure`.
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

    /// A value with each stored property given.
    package init(
        environment: String, pluginID: String, hosts: [ExposedHost], fix: String?, fixIsLower: Bool, command: String?,
        opensChangeRequest: Bool, note: String?
    ) {
        self.environment = environment
        self.pluginID = pluginID
        self.hosts = hosts
        self.fix = fix
        self.fixIsLower = fixIsLower
        self.command = command
        self.opensChangeRequest = opensChangeRequest
        self.note = note
    }
}
