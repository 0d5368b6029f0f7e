package import ArgumentParser
package import Foundation
public import PlugboardModel
import PlugboardStore

/// What a caller must hold to perform an operation, and the lane its work runs in on a served board.
public enum OperationAccess: String, Sendable {
    /// Reads the board: any access token, read-only ones included; the readers' lane.
    case read
    /// Changes the board: a token that is not read-only; the changes' lane.
    case write
    /// Stops or takes away (a kill switch, an abort, a disable, a yank, a revocation): a token that is not read-only;
    /// a lane of its own, so that no flood of reads or changes queues in front of it.
    case stop
}

/// Whether an operation can start or widen what runs: such an operation becomes a change request where the approval
/// policy protects it (`plugboard policy set --env ENV --approvals N`). Stopping and narrowing never wait.
public enum OperationWidening: String, Sendable {
    /// It only reads, stops or narrows, or changes nothing that runs: applied at once.
    case never
    /// It widens what runs in its environment (`--env`): a change request when that environment is protected.
    case inEnvironment
    /// It widens what runs in every environment (a revive, a trusted signer): a change request when any environment is
    /// protected, needing the most approvals any of them requires.
    case boardWide
}

/// What an operation is: its name, who may perform it, and the words its CLI command and the API document use.
public struct OperationDeclaration: Sendable {
    /// `group.command` (`plugin.kill`), or one word for a top-level command (`clients`): the CLI command
    /// (`plugboard plugin kill`, `plugboard clients`), the API's path (`POST /api/admin/plugin.kill`), the OpenAPI
    /// `operationId` and the action of refusals in the audit log.
    public let name: String
    /// The action of the audit rows it writes and of its refusals: the word its name is, or for an operation whose
    /// rows predate its name (`plugin.add-signature` writes `plugin.sign`), the word they keep.
    public let action: AuditAction
    public let access: OperationAccess
    /// One sentence: what it does (the command's abstract and the document's summary).
    public let abstract: String
    /// More, for the command's help and the document's description.
    public let discussion: String
    /// The name of the schema of the answer in the OpenAPI document's components, when not its type's name (see
    /// `OperationRequest.responseSchema`).
    public let response: String?
    /// The largest request body the server reads for it, when not the server's usual limit.
    public let bodyLimit: Int?
    /// Other names of its CLI command (`policy list` for `policy show`).
    public let aliases: [String]
    /// Whether its `env` may be absent, for an operation whose environment only narrows its answer (`clients`): the CLI
    /// then sends one only when `--env` is given.
    public let environmentOptional: Bool
    /// Whether it can start or widen what runs, and so waits for approvals where they are required.
    public let widens: OperationWidening
    /// Whether its answer is a secret (a new token): as a change request, only its author applies it, never a schedule
    /// or the last approval.
    public let answerIsSecret: Bool

    /// A declaration.
    package init(
        _ name: AuditAction, _ access: OperationAccess, writes action: AuditAction? = nil, abstract: String, discussion: String = "",
        response: String? = nil, bodyLimit: Int? = nil,
        aliases: [String] = [], environmentOptional: Bool = false, widens: OperationWidening = .never, answerIsSecret: Bool = false
    ) {
        self.name = name.name
        self.action = action ?? name
        self.access = access
        self.abstract = abstract
        self.discussion = discussion
        self.response = response
        self.bodyLimit = bodyLimit
        self.aliases = aliases
        self.environmentOptional = environmentOptional
        self.widens = widens
        self.answerIsSecret = answerIsSecret
    }

    /// The command group (`plugin`); nil for a top-level command (`clients`).
    public var group: String? { name.contains(".") ? String(name.prefix { $0 != "." }) : nil }
    /// The command's name in its group (`kill`), or at the top level (`clients`).
    public var command: String { name.contains(".") ? String(name.drop { $0 != "." }.dropFirst()) : name }
}

/// One operation on a board, declared once: what the `plugboard` CLI does, as a Swift value.
///
/// Every command of the CLI that reads or changes a board is one operation type, in the groups ``PluginOperations``,
/// ``FlagOperations``, ``RolloutOperations``, ``TrustOperations``, ``RoleOperations``, ``TokenOperations``,
/// ``SecretOperations``, ``HostOperations``, ``BoardOperations`` and ``ChangeOperations``. A value is a request with its fields checked
/// (``PluginID``, ``Reason``, `SemanticVersion`, …: a value that exists is valid); ``BoardFile/perform(_:as:)``
/// performs it on a board as a principal, with every check the CLI's command makes, and answers with its ``Response``.
///
/// ```swift
/// let board = try BoardFile.open(at: "plugboard.sqlite")
/// let kill = PluginOperations.Kill(.plugin("com.example.greeter"), reason: try Reason(validating: "INC-42"))
/// let answer = try board.perform(kill, as: .current)
/// print(answer.value.message)
/// ```
///
/// The operations are this module's own: the declaration's initializer is not public, so no other module declares one.
public protocol BoardOperation: Sendable {
    /// What the operation answers with: the JSON the CLI prints with `--json`.
    associatedtype Response: Codable & Sendable
    /// The operation's name, access and words.
    static var declaration: OperationDeclaration { get }
}

/// An operation whose fields are swift-argument-parser's `@Argument`, `@Option` and `@Flag` with typed values: every
/// operation but `plugin.register`.
///
/// From those fields come the CLI command (`plugboard plugin kill`, its options and help), the request on the wire
/// (the fields as one JSON object, ``OperationWire``), the server's route (`POST /api/admin/plugin.kill`) and its
/// place in the OpenAPI document. An operation that acts in an environment declares a plain stored property
/// `var env: String? = nil`: the CLI fills it from `--env`, the wire carries it as `env`.
///
/// The CLI and the server both parse an operation through its arguments, so the checks of its `validate()` and of its
/// fields' types are made the same way whichever side received it.
package protocol ParsedOperation: OperationRequest, ParsableArguments {
    /// The environment the operation acts in, for an operation that declares `env` (nil for others).
    var env: String? { get set }
    /// The text the CLI prints for an answer without `--json`; nil for the default (a ``ChangeResult``'s message and
    /// notes, else the JSON).
    static func text(_ value: Response) -> String?
    /// The text the CLI prints for this request's answer without `--json`: ``text(_:)``, unless the request's fields
    /// change it (an empty listing's sentence says what was asked for).
    func text(for value: Response) -> String?
    /// Whether the operation has a `reason` field of its own; then the CLI command of one that widens takes no second
    /// `--reason` for its change request. Declared rather than read from the fields: every command's type is chosen at
    /// each start of the CLI, and reading every operation's fields costs a tenth of a short command's time.
    static var declaresReason: Bool { get }
}

/// A parsed operation that answers with a ``ChangeResult`` (what changed, in a sentence, and notes): most changes.
package protocol ChangingOperation: ParsedOperation where Response == ChangeResult {}

extension ParsedOperation {
    package var env: String? {
        get { nil }
        set {}
    }

    package static func text(_ value: Response) -> String? { nil }

    package static var declaresReason: Bool { false }

    package func text(for value: Response) -> String? { Self.text(value) }

    package static var parameters: [OperationParameter] { OperationWire.fields(of: Self.self).map(\.parameter) }
    package func wireBody() throws(BoardError) -> Data { try OperationWire.encode(self) }
    package static func fromWire(_ body: Data) throws(BoardError) -> Self { try OperationWire.decode(Self.self, from: body) }
    /// Through the wire and back: parsed and validated as the CLI's arguments are.
    package func checked() throws(BoardError) -> Self { try Self.fromWire(try wireBody()) }

    /// The environment the operation acts in, checked; refused when the request named none.
    package func environment() throws(BoardError) -> String {
        guard let env else { throw BoardError(.invalidInput, "\(Self.name) acts in an environment and the request names none (env)") }
        try Validate.environment(env)
        return env
    }
}
