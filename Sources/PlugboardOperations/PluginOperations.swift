public import ArgumentParser
public import PlugboardModel
package import PlugboardStore
package import PlugboardVersioning

/// Reads and changes of plug-ins: the operations behind `plugboard plugin …`.
public enum PluginOperations {
    /// The reads of the group, in the order the OpenAPI document lists them (`plugboard plugin --help` lists status
    /// after the lifecycle).
    package static let reads: [any ParsedOperation.Type] = [List.self, Show.self, Status.self]

    /// `plugin list`: the plug-ins and their state in an environment, in id order; a page with `--limit` and
    /// `--after`.
    public struct List: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .pluginList, .read, abstract: "List plug-ins and their state in the environment.",
            discussion: "In id order; --limit and --after give a page (--after the previous page's last id).")
        @Option(help: "At most this many plug-ins (1-10000).") public var limit: Int?
        @Option(help: ArgumentHelp("Only plug-ins whose id sorts after this one (the previous page's last id).", valueName: "id"))
        public var after: PluginID?
        @Option(help: ArgumentHelp("Only plug-ins whose id or name contains this text, in any case.", valueName: "text"))
        public var search: String?
        public var env: String?
        public init() {}
        public init(env: String, limit: Int? = nil, after: PluginID? = nil, search: String? = nil) {
            self.env = env
            self.limit = limit
            self.after = after
            self.search = search
        }
        public func validate() throws {
            if let limit, !(1...10_000).contains(limit) { throw ValidationError("--limit must be between 1 and 10000") }
            if let search,
                search.isEmpty || search.utf8.count > 200
                    || search.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            {
                throw ValidationError("--search must be 1-200 characters of text")
            }
        }
        /// What it answers.
        public typealias Response = [PluginSummary]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.pluginSummaries(environment: try environment(), after: after?.text, limit: limit, matching: search))
        }
        package static func text(_ plugins: [PluginSummary]) -> String? { PluginText.list(plugins) }
    }

    /// `plugin show ID`.
    public struct Show: ParsedOperation, PluginOperation {
        public static let declaration = OperationDeclaration(
            .pluginShow, .read, abstract: "Show a plug-in: versions, environments, owners, kill switches.")
        @OptionGroup public var target: PluginTarget
        public init() {}
        /// What it answers.
        public typealias Response = PluginDetail
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.pluginDetail(id.text))
        }
        package static func text(_ detail: PluginDetail) -> String? { PluginText.detail(detail) }
    }

    /// `plugin status [ID]`: what each host loaded or skipped, and why.
    public struct Status: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .pluginStatus, .read, abstract: "What each host loaded or skipped, and why.", response: "LoadStatusList")
        @Argument(help: "Only this plug-in.") public var id: PluginID?
        public init() {}
        public init(id: PluginID?) { self.id = id }
        /// What it answers.
        public typealias Response = [HostLoadStatus]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            if let id { _ = try board.pluginDetail(id.text) }  // a clear "not registered" for a typo
            let rows = try board.loadStatus(pluginID: id?.text)
            return OperationReply(rows, notes: TelemetryNotes.drops(board, hosts: true))
        }
        package func text(for rows: [HostLoadStatus]) -> String? { PluginText.status(rows, of: id) }
    }
}

/// Parsing of request fields with the CLI's sentences.
public enum OperationParse {
    /// A semantic version, or a refusal naming it.
    package static func version(_ text: String) throws(BoardError) -> SemanticVersion {
        do { return try SemanticVersion(text) } catch { throw BoardError(.invalidInput, error.message) }
    }

    /// A length of time written as a positive count and one of `units` (from `s`, `m`, `h`, `d`, `w`: `30s`, `10m`, `12h`,
    /// `90d`, `2w`), in seconds; nil for anything else.
    package static func duration(_ text: String, units: String) -> Double? {
        let seconds: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400]
        guard let unit = text.last, units.contains(unit), let length = seconds[unit], let count = Int(text.dropLast()), count > 0
        else { return nil }
        return Double(count) * length
    }
}

/// What telemetry the board did not keep, as notes for stderr: what `plugin status` and `clients` show may then be
/// incomplete.
public enum TelemetryNotes {
    /// Notes on drops of hosts' reports (`hosts`) or SDKs' usage, and drops that concern both.
    package static func drops(_ board: Board, hosts: Bool) -> [String] {
        guard let drops = try? board.telemetryDrops() else { return [] }
        return drops.filter { drop in
            drop.concernsHosts == hosts || drop.kind == TelemetryDrop.Kind.storedRowsOverCap || drop.kind == TelemetryDrop.Kind.fileFull
        }.map { drop in
            "\(drop.count) \(Validate.escaped(drop.kind)) were dropped, the last at \(drop.lastAt); what is shown may be incomplete"
        }
    }
}
