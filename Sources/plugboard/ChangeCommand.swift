import ArgumentParser
import PlugboardOperations

/// `plugboard change …`: change requests, where an environment's approval policy requires approvals.
struct ChangeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change", abstract: "Change requests: list, show, approve, reject, cancel, apply and schedule them.",
        discussion: """
            In an environment protected with plugboard policy set --env ENV --approvals N, a change that starts or widens \
            what runs (enable, pin, unpin, revive, unyank, a flag enabled or rolled out, a signer trusted, a token created, \
            a rollout started or resumed, a policy loosened) opens a change request instead of being applied; N people \
            other than its author approve it, and the last approval applies it (or its schedule does). A change that \
            stops or narrows (kill, disable, yank, revoke, abort) is applied at once, always.
            """,
        // `change approve` signs with --key on this machine: its own command.
        subcommands: ChangeOperations.all.map { operation in
            ObjectIdentifier(operation) == ObjectIdentifier(ChangeOperations.Approve.self)
                ? ChangeApproveCommand.self : commands([operation])[0]
        })
}
