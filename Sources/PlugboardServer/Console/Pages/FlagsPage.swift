import PlugboardModel
import PlugboardOperations

/// `/ui/flags`: an environment's flags, or those unused for 30 days.
struct FlagsPage: ConsoleView {
    static let template = "flags"

    let switcher: EnvironmentSwitcher
    /// Whether only the flags unused for 30 days are shown.
    let unused: Bool
    /// Each flag in the environment, linked to its page there.
    let flags: [LinkedRow<FlagSummary>]

    static func read(_ reads: ConsoleReads) throws -> FlagsPage {
        let switcher = try reads.switcher(action: "/ui/flags")
        let unused = reads.page.value("unused").flatMap(Int.init)
        let flags = try reads.perform(FlagOperations.List(env: switcher.env, unused: unused))
        return FlagsPage(
            switcher: switcher, unused: unused != nil,
            flags: flags.map { LinkedRow(item: $0, href: ConsolePages.link("/ui/flags", $0.name, env: $0.environment)) })
    }
}
