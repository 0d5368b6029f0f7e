public import PlugboardVersioning

/// What hosts of an environment do about a release an advisory affects, from the mildest to the strictest.
public enum AdvisoryAction: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Hosts load the release and report the advisory as a warning (load reports, `plugboard plugin status`).
    case warn
    /// A host that runs the release keeps it (and reports the warning); a host that has not loaded it refuses it.
    case refuseNew = "refuse-new"
    /// Every host stops the release, as a kill switch of the version does, with the advisory as the reason.
    case stop

    private var rank: Int {
        switch self {
        case .warn: 0
        case .refuseNew: 1
        case .stop: 2
        }
    }

    public static func < (a: AdvisoryAction, b: AdvisoryAction) -> Bool { a.rank < b.rank }
}

/// An advisory's qualitative severity, as the board computes it when it imports the advisory (see ``OSVDocument``).
public enum AdvisorySeverity: String, Sendable, Hashable, Codable, CaseIterable {
    case critical, high, medium, low
    /// Neither `database_specific.severity` nor a CVSS v3 vector says: treated as `low` (its action is `warn`).
    case unknown

    /// The action an advisory of this severity takes where no one chose one: critical stops, high refuses new loads,
    /// anything else warns.
    public var defaultAction: AdvisoryAction {
        switch self {
        case .critical: .stop
        case .high: .refuseNew
        case .medium, .low, .unknown: .warn
        }
    }
}

/// One event of an OSV `SEMVER` range: where being affected starts (`introduced`, inclusive; `"0"` is the start of
/// time), ends (`fixed`, exclusive), or ends after a version (`last_affected`, inclusive).
public struct AdvisoryEvent: Sendable, Hashable, Codable {
    /// The kinds of events.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case introduced
        case fixed
        case lastAffected = "last_affected"
    }

    public let kind: Kind
    /// A semantic version, or `"0"` for an `introduced` event at the start.
    public let version: String

    /// An event.
    public init(_ kind: Kind, _ version: String) {
        self.kind = kind
        self.version = version
    }
}

/// What one advisory says is affected in one plug-in: an OSV `SEMVER` range (its events) or a list of versions.
public struct AdvisoryRange: Sendable, Hashable, Codable {
    /// The events of a `SEMVER` range; empty for a list of versions.
    public let events: [AdvisoryEvent]
    /// The versions listed (OSV's `versions`); empty for a range.
    public let versions: [String]

    /// A range or a list.
    public init(events: [AdvisoryEvent] = [], versions: [String] = []) {
        self.events = events
        self.versions = versions
    }

    /// Whether `version` is affected, by OSV's rules for `SEMVER`: the events in version order (`"0"` first); an
    /// `introduced` at or below the version makes it affected, a `fixed` at or below it unaffected, a `last_affected`
    /// below it unaffected. A listed version is affected when it has the same precedence.
    public func affects(_ version: SemanticVersion) -> Bool { Parsed(self).affects(version) }

    /// The range with its versions parsed and its events in version order, to check many versions against.
    struct Parsed: Sendable {
        let versions: [SemanticVersion]
        /// The events in version order; a nil version is `"0"`, the start.
        let events: [(at: SemanticVersion?, kind: AdvisoryEvent.Kind)]

        init(_ range: AdvisoryRange) {
            versions = range.versions.compactMap { SemanticVersion(parsing: $0) }
            events = range.events.compactMap { event -> (at: SemanticVersion?, kind: AdvisoryEvent.Kind)? in
                if event.version == "0" { return event.kind == .introduced ? (nil, event.kind) : nil }
                guard let at = SemanticVersion(parsing: event.version) else { return nil }
                return (at, event.kind)
            }
            .sorted { a, b in
                guard let left = a.at else { return b.at != nil }
                guard let right = b.at else { return false }
                return left < right
            }
        }

        func affects(_ version: SemanticVersion) -> Bool {
            if versions.contains(where: { $0 == version }) { return true }
            var affected = false
            for (at, kind) in events {
                switch kind {
                case .introduced: if at.map({ version >= $0 }) ?? true { affected = true }
                case .fixed: if let at, version >= at { affected = false }
                case .lastAffected: if let at, version > at { affected = false }
                }
            }
            return affected
        }
    }

    /// The range as people read it: `>= 1.2.0, < 1.4.2`, or `1.0.0, 1.0.1`.
    public var text: String {
        if events.isEmpty { return versions.joined(separator: ", ") }
        return events.map { event in
            switch event.kind {
            case .introduced: event.version == "0" ? ">= 0" : ">= \(event.version)"
            case .fixed: "< \(event.version)"
            case .lastAffected: "<= \(event.version)"
            }
        }.joined(separator: ", ")
    }
}

/// An advisory as a host acts on it, in the registry it reads: what it affects and its action in the host's
/// environment. Withdrawn advisories are not sent.
public struct HostAdvisory: Sendable, Hashable, Codable {
    /// The advisory's id (`PBSA-2026-0001`, `GHSA-…`).
    public let id: String
    /// Its summary, for the sentences hosts report.
    public let summary: String?
    /// What hosts of the snapshot's environment do about it.
    public let action: AdvisoryAction
    /// What it affects, by plug-in id.
    public let affected: [String: [AdvisoryRange]]

    /// Whether it affects `pluginID` at `version`.
    public func affects(_ pluginID: String, _ version: SemanticVersion) -> Bool {
        affected[pluginID]?.contains { $0.affects(version) } ?? false
    }

    /// The advisory in a sentence's words: `advisory PBSA-1 (token leak)`.
    public var named: String { "advisory \(id)" + (summary.map { " (\($0))" } ?? "") }

    /// A value with each stored property given.
    public init(id: String, summary: String?, action: AdvisoryAction, affected: [String: [AdvisoryRange]]) {
        self.id = id
        self.summary = summary
        self.action = action
        self.affected = affected
    }
}

extension [HostAdvisory] {
    /// The advisories that affect `pluginID` at `version` (a text that is not a version: none), strictest first.
    public func affecting(_ pluginID: String, _ version: String) -> [HostAdvisory] {
        guard let parsed = SemanticVersion(parsing: version) else { return [] }
        return filter { $0.affects(pluginID, parsed) }.sorted { ($0.action, $1.id) > ($1.action, $0.id) }
    }
}
