import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// The CLI command of a ``BoardOperation``: its name, help, arguments and options are the operation's declaration; it
/// performs the operation on the board file, or with `--server` on a served board, and prints the answer. An
/// operation that widens what runs also takes `Flags`' options (``WideningFlags``): where it waits for approvals, it
/// opens a change request and says so in one sentence.
struct OperationCommand<Op: ParsedOperation, Flags: ChangeFlags>: RemoteCommand {
    static var configuration: CommandConfiguration { declared(Op.self) }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var operation: Op
    @OptionGroup var change: Flags

    func execute(_ output: Output) throws(BoardError) {
        var operation = self.operation
        if OperationWire.actsInEnvironment(Op.self) {
            // An environment that only narrows the answer is sent when --env names one.
            operation.env = Op.declaration.environmentOptional && global.env == nil ? nil : try global.environment()
        }
        switch try global.submit(operation, options: try change.options(for: operation)) {
        case .performed(let reply):
            let answer = reply.value
            if let change = answer as? ChangeResult {
                output.report(change)
            } else if !output.json, let text = operation.text(for: answer) {
                print(multiline(text))
            } else if !output.json, let result = answer as? ChangeRequestResult {
                // A step of a change request's life (approve, reject, cancel, schedule, acknowledge) says what it did.
                print(multiline(result.message))
            } else {
                output.printJSON(answer)
            }
        case .requested(let reply):
            try ChangeWait.report(reply.value, wait: change.wait, global: global, output: output)
        }
    }
}

extension GlobalOptions {
    /// Performs `request`, or, where it waits for approvals, says which change request it opened and answers nil.
    func performOrRequest<R: ParsedOperation>(_ request: R, change: some ChangeFlags, _ output: Output) throws(BoardError) -> R.Response? {
        switch try submit(request, options: try change.options(for: request)) {
        case .performed(let reply): return reply.value
        case .requested(let reply):
            try ChangeWait.report(reply.value, wait: change.wait, global: self, output: output)
            return nil
        }
    }
}

/// The options a command adds for change requests.
protocol ChangeFlags: ParsableArguments {
    /// Waits until the request is applied, rejected or cancelled.
    var wait: Bool { get }
    /// The options for `operation`.
    func options<Op: ParsedOperation>(for operation: Op) throws(BoardError) -> ChangeOptions
}

/// No options: an operation that never waits for approvals.
struct NoChangeFlags: ChangeFlags {
    var wait: Bool { false }
    func options<Op: ParsedOperation>(for operation: Op) throws(BoardError) -> ChangeOptions { ChangeOptions() }
}

/// `--at`, `--emergency --reason` and `--wait`, for an operation that widens what runs.
struct WideningFlags: ChangeFlags {
    @Option(help: "Where it waits for approvals: apply it at this time once approved (ISO-8601).") var at: String?
    @Flag(help: "Where it waits for approvals: apply it at once as an audited emergency (admins; needs --reason).")
    var emergency = false
    @Option(help: "Why, for --emergency.") var reason: String?
    @Flag(help: "Where it waits for approvals: wait until the request is applied, rejected or cancelled.") var wait = false

    func validate() throws {
        if emergency, reason == nil { throw ValidationError("--emergency needs --reason: say why it cannot wait") }
        if reason != nil, !emergency { throw ValidationError("--reason is the reason of an --emergency") }
    }

    func options<Op: ParsedOperation>(for operation: Op) throws(BoardError) -> ChangeOptions {
        ChangeOptions(at: at, emergencyReason: emergency ? reason : nil)
    }
}

/// `--at`, `--emergency` and `--wait`, for an operation that widens what runs and has a `--reason` of its own: the
/// emergency's reason is that one.
struct WideningFlagsOwnReason: ChangeFlags {
    @Option(help: "Where it waits for approvals: apply it at this time once approved (ISO-8601).") var at: String?
    @Flag(help: "Where it waits for approvals: apply it at once as an audited emergency (admins; needs --reason).")
    var emergency = false
    @Flag(help: "Where it waits for approvals: wait until the request is applied, rejected or cancelled.") var wait = false

    func options<Op: ParsedOperation>(for operation: Op) throws(BoardError) -> ChangeOptions {
        guard emergency else { return ChangeOptions(at: at) }
        let body = try? JSONSerialization.jsonObject(with: try operation.wireBody()) as? [String: Any]
        guard let reason = body?["reason"] as? String else {
            throw BoardError.invalid("--emergency needs --reason: say why it cannot wait")
        }
        return ChangeOptions(at: at, emergencyReason: reason)
    }
}

/// Waiting for a change request to end (`--wait`).
enum ChangeWait {
    /// Prints the request's sentence (or JSON), first waiting for its end with `wait`; a request that ended rejected or
    /// cancelled is a refusal (exit 1).
    static func report(_ opened: ChangeRequestResult, wait: Bool, global: GlobalOptions, output: Output) throws(BoardError) {
        var result = opened
        if wait, ["open", "scheduled"].contains(result.state) {
            if !output.json {
                print(multiline(result.message))
                fflush(nil)
            }
            result = try until(result, global: global)
        }
        // An emergency's answer may hold a secret (a new token): printed once, as change apply prints it.
        if output.json { output.printJSON(result) } else { print(multiline(ChangeOperations.Apply.text(result) ?? result.message)) }
        if ["rejected", "cancelled"].contains(result.state) {
            throw BoardError.conflict(
                "change request \(result.id) was \(result.state)\(result.request.closeReason.map { ": \($0)" } ?? "")")
        }
    }

    /// Polls the request every second until it is applied, rejected or cancelled.
    static func until(_ result: ChangeRequestResult, global: GlobalOptions) throws(BoardError) -> ChangeRequestResult {
        var request = result.request
        while ["open", "scheduled"].contains(request.state) {
            Thread.sleep(forTimeInterval: 1)
            request = try global.perform(ChangeOperations.Show(id: try ChangeOperations.RequestID(validating: String(result.id))))
        }
        let message =
            switch request.state {
            case "applied": "change request \(request.id) applied by \(request.closedBy ?? "?")"
            default: "change request \(request.id) \(request.state) by \(request.closedBy ?? "?")"
            }
        return ChangeRequestResult(message: message, request: request)
    }
}

/// The name, abstract and discussion of `operation`'s command: for ``OperationCommand`` and for a hand-written command
/// that performs it (one that reads a file, or prints what is not the CLI's JSON).
func declared<Op: ParsedOperation>(_ operation: Op.Type) -> CommandConfiguration {
    let declaration = Op.declaration
    return CommandConfiguration(
        commandName: declaration.command, abstract: declaration.abstract, discussion: declaration.discussion, aliases: declaration.aliases)
}

/// The commands of `operations`, in their order.
func commands(_ operations: [any ParsedOperation.Type]) -> [any ParsableCommand.Type] {
    operations.map { command(for: $0) }
}

private func command<Op: ParsedOperation>(for type: Op.Type) -> any ParsableCommand.Type {
    guard Op.declaration.widens != .never else { return OperationCommand<Op, NoChangeFlags>.self }
    if Op.declaresReason {
        return OperationCommand<Op, WideningFlagsOwnReason>.self
    }
    return OperationCommand<Op, WideningFlags>.self
}
