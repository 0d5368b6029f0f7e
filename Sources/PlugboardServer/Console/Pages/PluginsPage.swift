import PlugboardModel
import PlugboardOperations

/// `/ui/plugins`: every plug-in of an environment, searched by id or name, 100 a page.
struct PluginsPage: ConsoleView {
    static let template = "plugins"

    let switcher: EnvironmentSwitcher
    /// The search asked for.
    let query: String?
    let next: String?
    /// Each plug-in, linked to its page in the environment.
    let plugins: [LinkedRow<PluginSummary>]

    static let pageSize = 100

    static func read(_ reads: ConsoleReads) throws -> PluginsPage {
        let switcher = try reads.switcher(action: "/ui/plugins")
        let env = switcher.env
        let after = try reads.page.value("after").map { text throws(BoardError) in try PluginID(validating: text) }
        let search = reads.page.value("q")
        let plugins = try reads.perform(PluginOperations.List(env: env, limit: pageSize, after: after, search: search))
        var next: String?
        if plugins.count == pageSize, let last = plugins.last?.id {
            let escape = ConsolePages.escape
            next = "/ui/plugins?env=\(escape(env))&after=\(escape(last))" + (search.map { "&q=\(escape($0))" } ?? "")
        }
        return PluginsPage(
            switcher: switcher, query: search, next: next,
            plugins: plugins.map { LinkedRow(item: $0, href: ConsolePages.link("/ui/plugins", $0.id, env: $0.environment)) })
    }
}
