public import ArgumentParser
public import PlugboardModel
public import PlugboardVersioning

// The fields several operations share, declared once as swift-argument-parser option groups: their help is written
// once, and their fields travel on the wire under their own names, in the group's place.

/// The plug-in an operation acts on: its `ID` argument.
public struct PluginTarget: ParsableArguments, Sendable {
    /// The plug-in id.
    @Argument(help: "The plug-in id.") public var id: PluginID
    /// swift-argument-parser's: the id is left for the parser to fill.
    public init() {}
    /// The plug-in `id`.
    public init(_ id: PluginID) { self.id = id }
}

/// An operation on one plug-in, named by its ``PluginTarget``.
public protocol PluginTargeted {
    /// The plug-in it acts on.
    var target: PluginTarget { get set }
}

extension PluginTargeted {
    /// The id of the plug-in it acts on.
    public var id: PluginID {
        get { target.id }
        set { target = PluginTarget(newValue) }
    }
}

/// The change request an operation acts on: its `ID` argument.
public struct RequestTarget: ParsableArguments, Sendable {
    /// The request's number.
    @Argument(help: "The request's number.") public var id: ChangeOperations.RequestID
    /// swift-argument-parser's: the number is left for the parser to fill.
    public init() {}
    /// The request numbered `id`.
    public init(_ id: ChangeOperations.RequestID) { self.id = id }
}

/// An operation on one change request, named by its ``RequestTarget``.
public protocol RequestTargeted {
    /// The request it acts on.
    var target: RequestTarget { get set }
}

extension RequestTargeted {
    /// The number of the request it acts on.
    public var id: ChangeOperations.RequestID {
        get { target.id }
        set { target = RequestTarget(newValue) }
    }
}

/// The flag an operation acts on: its `NAME` argument.
public struct FlagTarget: ParsableArguments, Sendable {
    /// The flag's name.
    @Argument(help: "The flag name.") public var name: FlagName
    /// swift-argument-parser's: the name is left for the parser to fill.
    public init() {}
    /// The flag `name`.
    public init(_ name: FlagName) { self.name = name }
}

/// An operation on one flag, named by its ``FlagTarget``.
public protocol FlagTargeted {
    /// The flag it acts on.
    var target: FlagTarget { get set }
}

extension FlagTargeted {
    /// The name of the flag it acts on.
    public var name: FlagName {
        get { target.name }
        set { target = FlagTarget(newValue) }
    }
}

/// What a kill switch covers, or a revive lifts it from: `ID`, `ID --version V`, or `--all`.
public struct KillScope: ParsableArguments, Sendable {
    /// The plug-in; nil with ``all``.
    @Argument(help: "The plug-in id (omit with --all).") public var id: PluginID?
    /// Only this version of the plug-in.
    @Option(help: "Only this version of the plug-in.") public var version: SemanticVersion?
    /// Every plug-in on the board.
    @Flag(name: .long, help: "Every plug-in on the board (admins only).") public var all = false
    /// swift-argument-parser's: the fields are left for the parser to fill.
    public init() {}
    /// The fields that stand for `target`.
    public init(_ target: KillTarget) throws(BoardError) {
        (id, version, all) = try KillTargets.fields(target)
    }
    /// A plug-in id or `--all`, not both; a version only with an id.
    public func validate() throws { try KillTargets.check(id: id, version: version, all: all) }
    /// The board's kill target.
    package func target() throws(BoardError) -> KillTarget { try KillTargets.target(id: id, version: version, all: all) }
}

// Operations whose only fields are a target (and an environment) take their typed initializer from these protocols:
// a conformance says the operation has no other field.

/// An operation whose only field is the plug-in it acts on.
public protocol PluginOperation: PluginTargeted, ParsableArguments {}

extension PluginOperation {
    /// The operation on plug-in `id`.
    public init(id: PluginID) {
        self.init()
        target = PluginTarget(id)
    }
}

/// An operation whose only fields are the plug-in it acts on and the environment it acts in.
public protocol PluginInEnvironmentOperation: PluginTargeted, ParsableArguments {
    /// The environment it acts in.
    var env: String? { get set }
}

extension PluginInEnvironmentOperation {
    /// The operation on plug-in `id` in `env`.
    public init(id: PluginID, env: String) {
        self.init()
        target = PluginTarget(id)
        self.env = env
    }
}

/// An operation whose only field is the change request it acts on.
public protocol RequestOperation: RequestTargeted, ParsableArguments {}

extension RequestOperation {
    /// The operation on the request numbered `id`.
    public init(id: ChangeOperations.RequestID) {
        self.init()
        target = RequestTarget(id)
    }
}

/// An operation whose only field is the flag it acts on.
public protocol FlagOperation: FlagTargeted, ParsableArguments {}

extension FlagOperation {
    /// The operation on the flag `name`.
    public init(name: FlagName) {
        self.init()
        target = FlagTarget(name)
    }
}

/// An operation whose only fields are the flag it acts on and the environment it acts in.
public protocol FlagInEnvironmentOperation: FlagTargeted, ParsableArguments {
    /// The environment it acts in.
    var env: String? { get set }
}

extension FlagInEnvironmentOperation {
    /// The operation on the flag `name` in `env`.
    public init(name: FlagName, env: String) {
        self.init()
        target = FlagTarget(name)
        self.env = env
    }
}
