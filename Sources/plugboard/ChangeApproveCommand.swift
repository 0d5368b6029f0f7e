import ArgumentParser
import Crypto
import Foundation
import PlugboardModel
import PlugboardOperations

/// `change approve N [--key FILE]`: with `--key`, the approval is signed here, with the approver's private key file,
/// over the digest of the change as this command reads it; only the key id and the signature are sent.
struct ChangeApproveCommand: RemoteCommand {
    static var configuration: CommandConfiguration {
        var configuration = declared(ChangeOperations.Approve.self)
        configuration.discussion += """


            With --key FILE (an approver key made with plugboard signing-key generate and registered with plugboard \
            approver add), the approval is signed on this machine: the command reads the request, recomputes its digest \
            from its operation and body, signs the approval of that digest and sends the key id and the signature. The \
            private key never leaves the machine. An environment whose policy requires signed approvals needs them.
            """
        return configuration
    }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var operation: ChangeOperations.Approve
    @Option(help: ArgumentHelp("Sign the approval with this approver key file (plugboard signing-key generate).", valueName: "file"))
    var key: String?

    func validate() throws {
        if key != nil, operation.keyID != nil || operation.signature != nil {
            throw ValidationError("--key signs the approval itself; give it without --key-id and --signature")
        }
    }

    func execute(_ output: Output) throws(BoardError) {
        var operation = self.operation
        if let key {
            let privateKey = try SigningKeyFile.read(key)
            let request = try global.perform(ChangeOperations.Show(id: operation.id))
            // The digest, summary and environment recomputed from the operation and body this command read, never the
            // ones the board states: a request edited behind the log is refused here, before anything is signed.
            let summary = try ChangeRequests.checkIntact(request)
            let digest = ApprovalStatement.changeDigest(operation: request.operation, body: request.body)
            let keyID = SigningKeys.keyID(publicKey: privateKey.publicKey.rawRepresentation)
            // What the signature covers, exactly, said before it is made: the operation and body read.
            let body = request.body.count > 300 ? "\(request.body.prefix(300))…" : request.body
            FileHandle.standardError.write(
                Data(
                    "note: signing with key \(keyID) the approval of change request \(operation.id): \(Validate.printable(summary)) (\(request.operation) \(Validate.printable(body)), digest \(digest.prefix(16))…\(request.openedSeq.map { ", opened at audit row \($0)" } ?? ""))\n"
                        .utf8))
            operation.keyID = try KeyID(validating: keyID)
            operation.signature = try ApprovalStatement.sign(digest: digest, moment: request.approvalMoment, with: privateKey)
        }
        let answer = try global.perform(operation)
        if output.json { output.printJSON(answer) } else { print(multiline(operation.text(for: answer) ?? answer.message)) }
    }
}
