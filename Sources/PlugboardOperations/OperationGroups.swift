public import ArgumentParser
public import PlugboardModel
public import PlugboardVersioning

// The fields several operations share, declared once as swift-argument-parser option groups: their help is written
// once, and their fields travel on the wire under their own names, in the group's place.

/// A value that names what an operation acts on, given as the operation's `ID` argument.
public protocol OperationTargetID: BoardField {
    /// The argument's help.
    static var targetHelp: String { get }
}

extension PluginID: OperationTargetID {
    /// The argument's help.
    public static var targetHelp: String { "The plug-in id." }
}

extension ChangeOperations.RequestID: OperationTargetID {
    /// The argument's help.
    public static var targetHelp: String { "The request's number." }
}

/// What an operation acts on, named by its `ID` argument: a plug-in (``PluginTarget``) or a change request
/// (``RequestTarget``).
public struct Target<ID: OperationTargetID>: ParsableArguments, Sendable {
    /// What it acts on.
    @Argument(help: ArgumentHelp(ID.targetHelp)) public var id: ID
    /// swift-argument-parser's: the id is left for the parser to fill.
    public init() {}
    /// The target `id`.
    public init(_ id: ID) { self.id = id }
}

/// The plug-in an operation acts on.
public typealias PluginTarget = Target<PluginID>
/// The change request an operation acts on.
public typealias RequestTarget = Target<ChangeOperations.RequestID>

/// An operation on one thing, named by its ``Target``.
public protocol Targeted {
    /// What names the thing it acts on.
    associatedtype ID: OperationTargetID
    /// The thing it acts on.
    var target: Target<ID> { get set }
}

extension Targeted {
    /// The id of what it acts on.
    public var id: ID {
        get { target.id }
        set { target = Target(newValue) }
    }
}

/// An operation on one plug-in.
public protocol PluginTargeted: Targeted where ID == PluginID {}

/// An operation on one change request.
public protocol RequestTargeted: Targeted where ID == ChangeOperations.RequestID {}

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

/// An operation whose only field is what it acts on.
public protocol TargetOperation: Targeted, ParsableArguments {}

extension TargetOperation {
    /// The operation on `id`.
    public init(id: ID) {
        self.init()
        target = Target(id)
    }
}

/// An operation whose only field is the plug-in it acts on.
public protocol PluginOperation: TargetOperation, PluginTargeted {}

/// An operation whose only field is the change request it acts on.
public protocol RequestOperation: TargetOperation, RequestTargeted {}

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
