import PlugboardModel
import PlugboardOperations

/// `/ui/plugins`: every plug-in of an environment, searched by id or name, 100 a page.
struct PluginsPage: ConsoleView {
    static let template = "plugins"

    let env: String
    let environments: [EnvironmentChoice]
    /// The search asked for.
    let query: String?
    let next: String?
    let plugins: [Row]

    /// One plug-in.
    struct Row: Sendable {
        let id: String
        let href: String
        let name: String
        let enabled: Bool
        let killed: Bool
        let activeVersion: String
        let latestVersion: String
        let pinnedVersion: String
    }

    static let pageSize = 100

    static func read(_ reads: ConsoleReads) throws -> PluginsPage {
        let (env, all) = try reads.environment()
        let after = try reads.page.value("after").map { text throws(BoardError) in try PluginID(validating: text) }
        let search = reads.page.value("q")
        let plugins = try reads.perform(PluginOperations.List(env: env, limit: pageSize, after: after, search: search))
        var next: String?
        if plugins.count == pageSize, let last = plugins.last?.id {
            let escape = ConsolePages.escape
            next = "/ui/plugins?env=\(escape(env))&after=\(escape(last))" + (search.map { "&q=\(escape($0))" } ?? "")
        }
        return PluginsPage(
            env: env, environments: EnvironmentChoice.list(all, env), query: search, next: next,
            plugins: plugins.map { plugin in
                Row(
                    id: plugin.id, href: ConsolePages.link("/ui/plugins", plugin.id, env: plugin.environment), name: plugin.name,
                    enabled: plugin.enabled, killed: plugin.killed, activeVersion: plugin.activeVersion ?? "–",
                    latestVersion: plugin.latestVersion ?? "–", pinnedVersion: plugin.pinnedVersion ?? "")
            })
    }
}
