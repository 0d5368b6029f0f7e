import PlugboardFlags
import PlugboardModel
import PlugboardStore

/// The text `plugboard flag list` and `flag show` print without `--json`: tables whose cells are escaped.
enum FlagText {
    /// One row a flag; when there is none, a sentence that says what was asked for.
    static func list(_ flags: [FlagSummary], unused: Int?, stale: Bool) -> String {
        var table = Table("NAME", "TYPE", "ENABLED", "STRATEGIES", "VARIANTS", "STALE", "OWNER", "CREATED")
        for flag in flags {
            table.add(
                flag.name + (flag.archived ? " (archived)" : ""), flag.type, flag.enabled.yesNo, String(flag.strategyCount),
                String(flag.variantCount), flag.potentiallyStale ? "potentially" : "no", flag.owner, String(flag.createdAt.prefix(10)))
        }
        return table.text(
            empty: unused.map { "Every flag was evaluated by a client in the last \($0) days." }
                ?? (stale ? "No potentially stale flags." : "No flags yet; create one with plugboard flag create NAME."))
    }

    /// Its name and type, description, dependencies, one row an environment, then its usage.
    static func detail(_ flag: FlagDetail) -> String {
        var lines: [String] = []
        lines.append(
            "\(Validate.escaped(flag.name))  (\(flag.type), owner \(Validate.escaped(flag.owner))\(flag.archivedAt.map { ", archived \($0)" } ?? "")\(flag.potentiallyStale ? ", potentially stale" : ""))"
        )
        if let description = flag.description { lines.append(description) }
        if !flag.dependencies.isEmpty {
            lines.append(
                "depends on: "
                    + flag.dependencies.map { dependency in
                        Validate.escaped(dependency.feature) + (dependency.enabled == false ? " (off)" : "")
                            + (dependency.variants.map { " variants \(Validate.escaped($0.joined(separator: ",")))" } ?? "")
                    }.joined(separator: ", "))
        }
        var table = Table("ENVIRONMENT", "ENABLED", "STRATEGIES", "VARIANTS")
        for env in flag.environments {
            let strategies = env.strategies.map { strategy -> String in
                var text = strategy.name
                if let rollout = strategy.parameters?["rollout"] { text += " \(rollout)%" }
                if let constraints = strategy.constraints, !constraints.isEmpty {
                    text += " (\(constraints.count) constraint\(constraints.count == 1 ? "" : "s"))"
                }
                return text
            }.joined(separator: "; ")
            table.add(
                env.environment, env.enabled.yesNo, strategies.isEmpty ? (env.enabled ? "(everyone)" : "-") : strategies,
                env.variants.isEmpty ? "-" : env.variants.map { "\($0.name):\($0.weight)" }.joined(separator: ", "))
        }
        lines.append(table.render())
        lines.append(usage(flag.usage))
        return lines.joined(separator: "\n")
    }

    /// Last seen and counts per environment, from what SDKs reported to plugboard serve.
    static func usage(_ usage: [FlagUsageSummary]) -> String {
        guard !usage.isEmpty else {
            return "usage: no client of plugboard serve reported evaluating it in the last \(UsageRetention.days) days"
        }
        var table = Table("ENVIRONMENT", "LAST SEEN", "YES", "NO", "VARIANTS")
        for entry in usage {
            table.add(
                entry.environment, entry.lastSeen.cell, String(entry.yes), String(entry.no),
                entry.variants.isEmpty
                    ? "-" : entry.variants.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ", "))
        }
        return "usage (last \(UsageRetention.days) days, per hour bucket):\n" + table.render()
    }
}
