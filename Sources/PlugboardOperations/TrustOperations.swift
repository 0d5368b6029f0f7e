public import ArgumentParser
import Foundation
public import PlugboardModel
package import PlugboardStore
public import PlugboardVersioning

extension SignaturePolicy: ExpressibleByArgument {}

/// Signature policies and trusted keys: `plugboard policy …`, `signer …` and `plugin add-signature`.
public enum TrustOperations {
    /// `plugboard policy …`, in the order its help lists them.
    package static let policies: [any ParsedOperation.Type] = [SetPolicy.self, ShowPolicies.self, ShowApprovalPolicies.self]
    /// `plugboard signer …`, in the order its help lists them.
    package static let signers: [any ParsedOperation.Type] = [AddSigner.self, ListSigners.self, RevokeSigner.self]

    /// `policy set --signatures off|warn|require`, or `policy set --approvals N [--signed-approvals off|require]`.
    public struct SetPolicy: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .policySet, .write,
            abstract: "Set the signature, approval or advisory policy of the environment given with --env (admins).",
            discussion: """
                --signatures off: signatures are not checked (the default). warn: hosts load releases and report signature \
                problems. require: hosts load a release only if a trusted, unrevoked key signed exactly its id, version, \
                manifest and artifact.
                --approvals N (1 to 10; 0 turns it off) protects the environment: a change that starts or widens what runs \
                there becomes a change request that N people other than its author must approve (plugboard change). \
                --signed-approvals require: each approval carries the approver's signature, and hosts check them. \
                --approvers says who may approve (and reject) its requests: default (board admins, and for a plug-in's \
                change its owners and maintainers), admins, owners (board admins and the plug-in's owners), or a group \
                (plugboard group), whose members approve if they also hold the default right. Loosening a protected \
                environment's policy is itself a change request.
                --advisories warn|refuse-new|stop is a floor: every advisory's action there is at least that (plugboard \
                advisory); lowering it is a change request where the environment is protected.
                """, widens: .inEnvironment)
        @Option(name: .long, help: "off, warn or require.") public var signatures: SignaturePolicy?
        @Option(name: .long, help: "Approvals a widening change needs (0 to 10; 0: none).") public var approvals: Int?
        @Option(name: .long, help: "off or require: whether approvals must be signed.") public var signedApprovals: SignedApprovals?
        @Option(name: .long, help: "Who may approve: default, admins, owners, or a group's name.") public var approvers: Approvers?
        @Option(name: .long, help: "warn, refuse-new or stop: the least action of every advisory there.")
        public var advisories: AdvisoryAction?
        public var env: String?
        public init() {}
        public init(signatures: SignaturePolicy, env: String) {
            self.signatures = signatures
            advisories = nil
            approvals = nil
            signedApprovals = nil
            approvers = nil
            self.env = env
        }
        public init(approvals: Int?, signedApprovals: SignedApprovals? = nil, approvers: Approvers? = nil, env: String) {
            signatures = nil
            advisories = nil
            self.approvals = approvals
            self.signedApprovals = signedApprovals
            self.approvers = approvers
            self.env = env
        }
        /// Sets the environment's floor for advisories.
        public init(advisories: AdvisoryAction, env: String) {
            signatures = nil
            approvals = nil
            signedApprovals = nil
            approvers = nil
            self.advisories = advisories
            self.env = env
        }
        public func validate() throws {
            if signatures == nil, approvals == nil, signedApprovals == nil, approvers == nil, advisories == nil {
                throw ValidationError("give --signatures, --advisories, or --approvals, --signed-approvals and/or --approvers")
            }
            if advisories != nil, signatures != nil || approvals != nil || signedApprovals != nil || approvers != nil {
                throw ValidationError("--advisories is set by a command of its own; give it alone")
            }
            if signatures != nil, approvals != nil || signedApprovals != nil || approvers != nil {
                throw ValidationError("--signatures and the approval policy are set by separate commands; give one of them")
            }
            if let approvals, !(0...10).contains(approvals) { throw ValidationError("--approvals must be 0 to 10") }
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            if let advisories {
                return OperationReply(try board.setAdvisoryFloor(advisories, environment: try environment(), by: actor))
            }
            if let signatures {
                return OperationReply(try board.setSignaturePolicy(signatures, environment: try environment(), by: actor))
            }
            return OperationReply(
                try board.setApprovalPolicy(
                    approvals: approvals, signed: signedApprovals?.rawValue, approvers: approvers?.text, environment: try environment(),
                    by: actor))
        }
        /// Only a loosening waits for approvals: tightening a policy is applied at once.
        package func widening(on board: Board) throws(BoardError) -> WideningScope? {
            let environment = try environment()
            if let advisories {
                return advisories < (try board.advisoryFloor(environment: environment) ?? .warn) ? .environment(environment) : nil
            }
            if let signatures {
                let now = try board.signaturePolicy(environment: environment)
                return signatures.strictness < now.strictness ? .environment(environment) : nil
            }
            let now = try board.approvalPolicies().first { $0.environment == environment }
            let fewer = (approvals ?? now?.approvals ?? 0) < (now?.approvals ?? 0)
            let unsigned = signedApprovals == .off && now?.signedApprovals == "require"
            let wider = approvers.map { ApprovalRights.loosens(from: now?.approvers ?? "default", to: $0.text) } ?? false
            return fewer || unsigned || wider ? .environment(environment) : nil
        }
    }

    /// Who may approve an environment's change requests: `default`, `admins`, `owners`, or a principal group's name.
    public struct Approvers: BoardField, Hashable {
        public let text: String
        public init(validating text: String) throws(BoardError) {
            if !["default", "admins", "owners"].contains(text) { try Validate.groupName(text) }
            self.text = text
        }
        public var description: String { text }
    }

    /// Whether approvals must be signed.
    public enum SignedApprovals: String, Sendable, CaseIterable, ExpressibleByArgument {
        case off, require
    }

    /// `policy approvals`: every environment's approval policy.
    public struct ShowApprovalPolicies: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .policyApprovals, .read, abstract: "Show every environment's approval policy.")
        public init() {}
        /// What it answers.
        public typealias Response = [ApprovalPolicy]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.approvalPolicies())
        }
        package static func text(_ policies: [ApprovalPolicy]) -> String? {
            Table.listing(policies, "ENVIRONMENT", "APPROVALS", "SIGNED", "APPROVERS", "SET", empty: "The board has no environment yet.") {
                [
                    $0.environment, String($0.approvals), $0.signedApprovals, $0.approvers,
                    Table.when($0.updatedAt, by: $0.updatedBy, otherwise: "never (none needed)"),
                ]
            }
        }
    }

    /// `policy show` (or `policy list`).
    public struct ShowPolicies: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .policyShow, .read, abstract: "Show every environment's signature policy.", response: "PolicyList", aliases: ["list"])
        public init() {}
        /// What it answers.
        public typealias Response = [EnvironmentSignaturePolicy]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.signaturePolicies())
        }
        package static func text(_ policies: [EnvironmentSignaturePolicy]) -> String? {
            Table.listing(policies, "ENVIRONMENT", "SIGNATURES", "SET", empty: "The board has no environment yet.") {
                [$0.environment, $0.signatures.rawValue, Table.when($0.updatedAt, by: $0.updatedBy, otherwise: "never (default off)")]
            }
        }
    }

    /// `signer add ID KEY` and `signer add --all KEY`.
    public struct AddSigner: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .signerAdd, .write,
            abstract: "Trust a public key to sign one plug-in's releases (its owners or an admin), or every plug-in's with --all (admins).",
            discussion: "Usage: plugboard signer add ID PUBLIC_KEY [--name TEXT], or plugboard signer add --all PUBLIC_KEY [--name TEXT].",
            widens: .boardWide)
        @Flag(name: .long, help: "Trust the key for every plug-in (admins only).") public var all = false
        @Argument(help: ArgumentHelp("The plug-in id (omit with --all), then the public key in base64.", valueName: "id-and-key"))
        public var idAndKey: [String] = []
        @Option(name: .long, help: "Whose key it is, for people.") public var name: String?
        public init() {}
        /// Trusts `publicKey` for `id`, or for every plug-in when `id` is nil.
        public init(id: PluginID?, publicKey: String, name: String?) {
            all = id == nil
            idAndKey = (id.map { [$0.text] } ?? []) + [publicKey]
            self.name = name
        }
        public func validate() throws {
            if all, idAndKey.count != 1 { throw ValidationError("with --all, give only the public key") }
            if !all, idAndKey.count != 2 { throw ValidationError("give a plug-in id and a public key, or --all and a public key") }
            do { _ = try pluginID() } catch { throw ValidationError(error.message) }
        }
        /// The plug-in id given, checked; nil with `--all`.
        private func pluginID() throws(BoardError) -> PluginID? {
            all ? nil : try PluginID(validating: idAndKey[0])
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.addSigner(pluginID: try pluginID()?.text, publicKey: idAndKey.last ?? "", name: name, by: actor))
        }
    }

    /// `signer list [ID]`.
    public struct ListSigners: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .signerList, .read,
            abstract: "List trusted keys: all, or those that may sign one plug-in (its own and those trusted for every plug-in).")
        @Argument(help: "Only the keys that may sign this plug-in.") public var id: PluginID?
        public init() {}
        public init(id: PluginID?) { self.id = id }
        /// What it answers.
        public typealias Response = [Signer]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.signers(pluginID: id?.text))
        }
        package func text(for signers: [Signer]) -> String? {
            Table.listing(
                signers, "KEY ID", "TRUSTED FOR", "NAME", "STATE", "ADDED", "PUBLIC KEY",
                empty: id.map { "No key is trusted to sign \($0); trust one with plugboard signer add \($0) PUBLIC_KEY." }
                    ?? "No key is trusted yet; trust one with plugboard signer add ID PUBLIC_KEY."
            ) { signer in
                [
                    signer.keyID, signer.pluginID == Signer.everyPlugin ? "every plug-in" : signer.pluginID, signer.name.cell,
                    Table.revocation(signer.revokedAt, by: signer.revokedBy, signer.revokeReason, otherwise: "trusted"),
                    "\(signer.addedAt) by \(signer.addedBy)", signer.publicKey,
                ]
            }
        }
    }

    /// `signer revoke KEY_ID --reason`: a stop.
    public struct RevokeSigner: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .signerRevoke, .stop, abstract: "Revoke a key: no signature it made counts any more, including earlier ones.",
            discussion: "Admins may revoke any key; the owners of every plug-in a key is trusted for may revoke it.")
        @Argument(help: "The key id (plugboard signer list).") public var keyID: KeyID
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(name: .long, help: "Why (kept in the board and the audit log).") public var reason: Reason
        public init() {}
        public init(keyID: KeyID, reason: Reason) {
            self.keyID = keyID
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.revokeSigner(keyID: keyID.text, reason: reason.text, by: actor))
        }
    }

    /// `plugin add-signature ID VERSION FILE`: the signature file's text. The CLI command reads the file and sends its
    /// text.
    public struct AddSignature: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .pluginAddSignature, .write, writes: .pluginSign,
            abstract: "Add a signature to a registered release (its owners, maintainers or an admin).",
            discussion: "The signature must verify and cover exactly this release: its id, version, manifest and artifact as registered.")
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The version.") public var version: SemanticVersion
        @Option(help: "The signature file's text (plugboard plugin sign).") public var signature: String
        @Option(help: "The name of the file it came from, for messages.") public var file: String
        public init() {}
        public init(id: PluginID, version: SemanticVersion, signature: String, file: String) {
            self.id = id
            self.version = version
            self.signature = signature
            self.file = file
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let parsed = try ReleaseSignature.parse(Data(signature.utf8), named: file)
            return OperationReply(try board.addSignature(id.text, version: version, parsed, by: actor))
        }
    }
}
