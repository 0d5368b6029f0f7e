import ArgumentParser
import PlugboardOperations

/// `plugboard policy …`: each environment's signature policy.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy", abstract: "Set and show each environment's signature, approval and advisory policies.",
        subcommands: commands(TrustOperations.policies))
}

/// `plugboard signer …`: which publisher keys are trusted to sign which plug-ins.
struct SignerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signer", abstract: "Trust, list and revoke the keys that sign plug-in releases.",
        subcommands: commands(TrustOperations.signers))
}

/// `plugboard approver …`: the keys whose signatures make approvals that hosts check.
struct ApproverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approver", abstract: "Register, list and revoke the approver keys whose signed approvals hosts check.",
        subcommands: commands(ApproverOperations.all))
}
