import PlugboardVersioning
import Synchronization

extension RegistrySnapshot {
    /// The snapshot's advisories that affect `pluginID` at `version` (a text that is not a version: none), strictest
    /// first: what a host checks each release it would select or runs against. Looks only at the advisories that name
    /// the plug-in, so a host's check of a plug-in costs the same with ten advisories on the board as with ten thousand.
    public func advisories(affecting pluginID: String, _ version: String) -> [HostAdvisory] {
        guard let advisories, let parsed = SemanticVersion(parsing: version) else { return [] }
        return advisoryIndex.naming(pluginID, in: advisories)
            .filter { entry in entry.ranges.contains { $0.affects(parsed) } }
            .map(\.advisory)
            .sorted { ($0.action, $1.id) > ($1.action, $0.id) }
    }
}

/// A snapshot's advisories by the plug-in ids they name, made once at the first look and shared by the snapshot's
/// copies (whose advisories are the same: the property is a constant). Not part of the snapshot's value: every index
/// is equal to every other, and hashes to nothing.
final class AdvisoryIndex: Sendable, Hashable {
    /// An advisory that names a plug-in, with its ranges of that plug-in parsed.
    struct Entry: Sendable {
        let advisory: HostAdvisory
        let ranges: [AdvisoryRange.Parsed]
    }

    private let byPlugin = Mutex<[String: [Entry]]?>(nil)

    /// The advisories of `all` that name `pluginID`, in their order, with their ranges of it parsed.
    func naming(_ pluginID: String, in all: [HostAdvisory]) -> [Entry] {
        byPlugin.withLock { index in
            if let index { return index[pluginID] ?? [] }
            var made: [String: [Entry]] = [:]
            for advisory in all {
                for (plugin, ranges) in advisory.affected {
                    made[plugin, default: []].append(Entry(advisory: advisory, ranges: ranges.map(AdvisoryRange.Parsed.init)))
                }
            }
            index = made
            return made[pluginID] ?? []
        }
    }

    static func == (a: AdvisoryIndex, b: AdvisoryIndex) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
