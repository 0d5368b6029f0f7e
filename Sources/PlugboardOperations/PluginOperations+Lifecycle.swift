public import ArgumentParser
public import PlugboardModel
package import PlugboardStore
public import PlugboardVersioning

/// Enabling, kill switches, yanks and pins: what decides whether a release runs.
extension PluginOperations {
    /// The operations of this file, in the order `plugboard plugin --help` lists them.
    package static let lifecycle: [any ParsedOperation.Type] = [
        Enable.self, Disable.self, Kill.self, Revive.self, Yank.self, Unyank.self, Pin.self, Unpin.self,
    ]

    /// `plugin enable ID`.
    public struct Enable: ParsedOperation, PluginInEnvironmentOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginEnable, .write, abstract: "Enable a plug-in in the environment.", widens: .inEnvironment)
        @OptionGroup public var target: PluginTarget
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.setEnabled(id.text, true, environment: try environment(), by: actor))
        }
    }

    /// `plugin disable ID`: a stop.
    public struct Disable: ParsedOperation, PluginInEnvironmentOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginDisable, .stop, abstract: "Disable a plug-in in the environment.")
        @OptionGroup public var target: PluginTarget
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.setEnabled(id.text, false, environment: try environment(), by: actor))
        }
    }

    /// `plugin kill`: a kill switch over a plug-in, one version, or all plug-ins; a stop.
    public struct Kill: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginKill, .stop, abstract: "Throw a kill switch over a plug-in, one of its versions, or all plug-ins.",
            discussion: "A kill switch covers every environment; running hosts deactivate what it covers at their next poll.")
        @OptionGroup public var scope: KillScope
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why (kept in the board and the audit log).") public var reason: Reason
        public init() {}
        public init(_ target: KillTarget, reason: Reason) throws(BoardError) {
            scope = try KillScope(target)
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.kill(try scope.target(), reason: reason.text, by: actor))
        }
    }

    /// `plugin revive`: lifts a kill switch.
    public struct Revive: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginRevive, .write, abstract: "Lift the kill switch over a plug-in, a version, or all plug-ins.",
            widens: .boardWide)
        @OptionGroup public var scope: KillScope
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why.") public var reason: Reason?
        public init() {}
        public init(_ target: KillTarget, reason: Reason?) throws(BoardError) {
            scope = try KillScope(target)
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.revive(try scope.target(), reason: reason?.text, by: actor))
        }
    }

    /// `plugin yank ID VERSION`: a stop.
    public struct Yank: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginYank, .stop, abstract: "Yank a version so hosts no longer pick it (a pin still wins).")
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The version to yank.") public var version: SemanticVersion
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why.") public var reason: Reason
        public init() {}
        public init(id: PluginID, version: SemanticVersion, reason: Reason) {
            self.id = id
            self.version = version
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.yank(id.text, version: version, reason: reason.text, undo: false, by: actor))
        }
    }

    /// `plugin unyank ID VERSION`.
    public struct Unyank: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginUnyank, .write, abstract: "Undo a yank.", widens: .boardWide)
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The version.") public var version: SemanticVersion
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why.") public var reason: Reason?
        public init() {}
        public init(id: PluginID, version: SemanticVersion, reason: Reason?) {
            self.id = id
            self.version = version
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.yank(id.text, version: version, reason: reason?.text, undo: true, by: actor))
        }
    }

    /// `plugin pin ID VERSION`.
    public struct Pin: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginPin, .write, abstract: "Pin a plug-in to one version in the environment.",
            widens: .inEnvironment)
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The version.") public var version: SemanticVersion
        public var env: String?
        public init() {}
        public init(id: PluginID, version: SemanticVersion, env: String) {
            self.id = id
            self.version = version
            self.env = env
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.pin(id.text, version: version, environment: try environment(), by: actor))
        }
    }

    /// `plugin unpin ID`.
    public struct Unpin: ParsedOperation, PluginInEnvironmentOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginUnpin, .write, abstract: "Remove the version pin in the environment.", widens: .inEnvironment
        )
        @OptionGroup public var target: PluginTarget
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.unpin(id.text, environment: try environment(), by: actor))
        }
    }
}

/// What `kill` and `revive` act on: ID, ID --version V, or --all.
enum KillTargets {
    static func check(id: PluginID?, version: SemanticVersion?, all: Bool) throws {
        if all, id != nil || version != nil { throw ValidationError("--all takes no plug-in id and no --version") }
        if !all, id == nil { throw ValidationError("name a plug-in id, or use --all") }
    }

    static func target(id: PluginID?, version: SemanticVersion?, all: Bool) throws(BoardError) -> KillTarget {
        if all { return .all }
        guard let id else { throw BoardError(.invalidInput, "name a plug-in id, or use --all") }
        guard let version else { return .plugin(id.text) }
        return .version(id.text, version)
    }

    static func fields(_ target: KillTarget) throws(BoardError) -> (PluginID?, SemanticVersion?, Bool) {
        switch target {
        case .all: (nil, nil, true)
        case .plugin(let id): (try PluginID(validating: id), nil, false)
        case .version(let id, let version): (try PluginID(validating: id), version, false)
        }
    }
}
