import PlugboardModel
import PlugboardOperations

/// `/ui/flags`: an environment's flags, or those unused for 30 days.
struct FlagsPage: ConsoleView {
    static let template = "flags"

    let env: String
    let environments: [EnvironmentChoice]
    /// Whether only the flags unused for 30 days are shown.
    let unused: Bool
    let flags: [Row]

    /// One flag in the environment.
    struct Row: Sendable {
        let name: String
        let href: String
        let type: String
        let enabled: Bool
        let archived: Bool
        let potentiallyStale: Bool
        let strategyCount: Int
        let variantCount: Int
        let owner: String
    }

    static func read(_ reads: ConsoleReads) throws -> FlagsPage {
        let (env, all) = try reads.environment()
        let unused = reads.page.value("unused").flatMap(Int.init)
        let flags = try reads.perform(FlagOperations.List(env: env, unused: unused))
        return FlagsPage(
            env: env, environments: EnvironmentChoice.list(all, env), unused: unused != nil,
            flags: flags.map { flag in
                Row(
                    name: flag.name, href: ConsolePages.link("/ui/flags", flag.name, env: flag.environment), type: flag.type,
                    enabled: flag.enabled, archived: flag.archived, potentiallyStale: flag.potentiallyStale,
                    strategyCount: flag.strategyCount, variantCount: flag.variantCount, owner: flag.owner)
            })
    }
}
