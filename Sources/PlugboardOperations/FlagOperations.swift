public import ArgumentParser
package import Foundation
public import PlugboardFlags
public import PlugboardModel
package import PlugboardStore

/// Reads and changes of feature flags: the operations behind `plugboard flag …`.
public enum FlagOperations {
    /// The operations whose CLI command is their declaration, in the order `plugboard flag --help` lists them.
    package static let commands: [any ParsedOperation.Type] = [
        Create.self, List.self, Show.self, Enable.self, Disable.self, Rollout.self, Archive.self, Unarchive.self,
    ]

    /// Every flag operation: ``commands``, then import and export, whose CLI commands read a file and print Unleash's
    /// JSON.
    package static let all: [any ParsedOperation.Type] = commands + [Import.self, Export.self]

    /// `flag create NAME`: the caller becomes its owner.
    public struct Create: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .flagCreate, .write, abstract: "Create a flag, off in every environment; you become its owner.")
        @Argument(help: "The flag name, for example checkout.new-flow.") public var name: NewFlagName
        @Option(name: .long, help: "release, experiment, operational, kill-switch or permission.") public var type: FlagType = .release
        @Option(name: .long, help: "What the flag is for.") public var description: String?
        public init() {}
        public init(name: NewFlagName, type: FlagType, description: String?) {
            self.name = name
            self.type = type
            self.description = description
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.createFlag(name.text, type: type, description: description, by: actor))
        }
    }

    /// `flag list [--stale] [--archived] [--unused DAYS]`.
    public struct List: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .flagList, .read, abstract: "List flags and their state in the environment.")
        @Flag(name: .long, help: "Only flags older than their type's expected lifetime (release/experiment 40 days, operational 7).")
        public var stale = false
        @Flag(name: .long, help: "Include archived flags.") public var archived = false
        @Option(
            name: .long,
            help: ArgumentHelp("Only flags no client of plugboard serve evaluated in the last DAYS days (at most 30).", valueName: "days"))
        public var unused: Int?
        public var env: String?
        public init() {}
        public init(env: String, stale: Bool = false, archived: Bool = false, unused: Int? = nil) {
            self.env = env
            self.stale = stale
            self.archived = archived
            self.unused = unused
        }
        public func validate() throws {
            if unused != nil && (stale || archived) { throw ValidationError("--unused cannot be combined with --stale or --archived") }
        }
        /// What it answers.
        public typealias Response = [FlagSummary]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let env = try environment()
            if let unused { return OperationReply(try board.unusedFlags(environment: env, days: unused)) }
            return OperationReply(try board.flagSummaries(environment: env, staleOnly: stale, includeArchived: archived))
        }
        package func text(for flags: [FlagSummary]) -> String? { FlagText.list(flags, unused: unused, stale: stale) }
    }

    /// `flag show NAME`: its definition in every environment, and its usage.
    public struct Show: ParsedOperation, FlagOperation {
        public static let declaration = OperationDeclaration(
            .flagShow, .read, abstract: "Show a flag's definition in every environment.")
        @OptionGroup public var target: FlagTarget
        public init() {}
        /// What it answers.
        public typealias Response = FlagDetail
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.flagDetail(name.text))
        }
        package static func text(_ flag: FlagDetail) -> String? { FlagText.detail(flag) }
    }

    /// `flag enable NAME`.
    public struct Enable: ParsedOperation, FlagInEnvironmentOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .flagEnable, .write, abstract: "Switch a flag on in the environment.", widens: .inEnvironment)
        @OptionGroup public var target: FlagTarget
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.setFlagEnabled(name.text, true, environment: try environment(), by: actor))
        }
    }

    /// `flag disable NAME`: a stop.
    public struct Disable: ParsedOperation, FlagInEnvironmentOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .flagDisable, .stop, abstract: "Switch a flag off in the environment.")
        @OptionGroup public var target: FlagTarget
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.setFlagEnabled(name.text, false, environment: try environment(), by: actor))
        }
    }

    /// `flag rollout NAME PERCENT [--stickiness FIELD]`: a flexibleRollout strategy.
    public struct Rollout: ParsedOperation, FlagTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .flagRollout, .write, abstract: "Roll a flag out to a percentage of users (a flexibleRollout strategy).",
            discussion:
                "Stickiness decides what keeps a user in the same bucket: default (userId, else sessionId, else random), userId, sessionId, random, or any context field.",
            widens: .inEnvironment)
        @OptionGroup public var target: FlagTarget
        @Argument(help: "0 to 100.") public var percent: Int
        @Option(help: "The context field that keeps a user in the same bucket.") public var stickiness = Stickiness.standard
        public var env: String?
        public init() {}
        public init(name: FlagName, percent: Int, stickiness: Stickiness = .standard, env: String) {
            self.name = name
            self.percent = percent
            self.stickiness = stickiness
            self.env = env
        }
        public func validate() throws {
            // The argument's form: a usage error (exit 2), like a percentage that is not a number.
            guard (0...100).contains(percent) else { throw ValidationError("the rollout percentage \(percent) is not between 0 and 100") }
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(
                try board.rolloutFlag(name.text, percent: percent, stickiness: stickiness.text, environment: try environment(), by: actor))
        }
    }

    /// `flag archive NAME`: no longer evaluated (off) or exported; a stop.
    public struct Archive: ParsedOperation, FlagOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .flagArchive, .stop, abstract: "Archive a flag: no longer evaluated (off) or exported.")
        @OptionGroup public var target: FlagTarget
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.archiveFlag(name.text, archived: true, by: actor))
        }
    }

    /// `flag unarchive NAME`.
    public struct Unarchive: ParsedOperation, FlagOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .flagUnarchive, .write, abstract: "Bring an archived flag back.", widens: .boardWide)
        @OptionGroup public var target: FlagTarget
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.archiveFlag(name.text, archived: false, by: actor))
        }
    }

    /// `flag import FILE`: Unleash client-API features JSON, sent as its text (the CLI reads the file).
    public struct Import: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .flagImport, .write, abstract: "Import Unleash client-API features JSON into the environment (admins).",
            discussion:
                "The file is {\"version\":…,\"features\":[…],\"segments\":[…]}. It is validated as a whole; an invalid file changes nothing. Flags not in the file are left alone.",
            widens: .inEnvironment)
        /// The features document's text, exactly as read (so that its keys reach the board as written).
        @Option(help: "The features document, as JSON text.") public var features: String
        /// What the file was called, for sentences.
        @Option(help: "The name of the file it came from, for messages.") public var file: String
        public var env: String?
        public init() {}
        public init(env: String, features: String, file: String) {
            self.env = env
            self.features = features
            self.file = file
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let env = try environment()
            let data = Data(features.utf8)
            let set: FeatureSet
            do { set = try FeatureSet.decode(from: data) } catch { throw BoardError(.invalidInput, error.message) }
            if let duplicate = DuplicateKeys.first(in: data) {
                throw BoardError(
                    .invalidInput,
                    "the features file \(file) has the key '\(Validate.escaped(duplicate.key))' twice (in \(Validate.escaped(duplicate.location))), and JSON readers disagree on which one counts; keep one"
                )
            }
            return OperationReply(try board.importFlags(set, environment: env, by: actor))
        }
    }

    /// `flag export`, and what `flag evaluate` evaluates: the environment's flags as Unleash client-API features JSON.
    public struct Export: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .flagExport, .read, abstract: "Print the environment's flags as Unleash client-API features JSON.",
            response: "UnleashFeatures")
        public var env: String?
        public init() {}
        public init(env: String) { self.env = env }
        /// What it answers.
        public typealias Response = FeatureSet
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.featureSet(environment: try environment(), requireExisting: true))
        }
        /// Unleash's own JSON, not the CLI's snake_case.
        package static func encodeResponse(_ value: FeatureSet) -> Data { value.encoded(prettyPrinted: false) }
        package static func decodeResponse(_ data: Data) throws -> FeatureSet { try FeatureSet.decode(from: data) }
        /// Unleash's features document keeps Unleash's own (camelCase) keys.
        package static var responseJSONSchema: JSONSchema { JSONSchema.of(FeatureSet.self, snakeCase: false) }
    }
}

extension FlagType: ExpressibleByArgument {}
