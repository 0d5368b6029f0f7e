package import Foundation
package import PlugboardModel
package import PlugboardStore

/// Who administers the board and who owns each plug-in: the requests behind `plugboard admin …` and `owner …`.
package enum AccessRequests {
    /// `admin add PRINCIPAL` and `admin remove PRINCIPAL`.
    package struct SetAdmin: AdminRequest {
        package var principal: String
        /// False removes the admin.
        package var admin: Bool
        package init(principal: String, admin: Bool) {
            self.principal = principal
            self.admin = admin
        }
        package static let route = AdminRoute(
            "admin.add", .put, "/admins/{principal}", .write,
            summary: "Make a principal a board admin, or with admin false remove one (never the last).",
            parameters: [
                .path("principal", "The principal."),
                AdminParameter("admin", .body, .boolean, required: true, "True to add, false to remove."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(admin ? try board.addAdmin(principal, by: actor) : try board.removeAdmin(principal, by: actor))
        }
    }

    /// `admin list`.
    package struct Admins: AdminRequest {
        package init() {}
        package static let route = AdminRoute(
            "admin.list", .get, "/admins", .read, summary: "List board admins.", response: "AdminList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[BoardAdmin]> {
            AdminReply(try board.admins())
        }
    }

    /// `owner add ID PRINCIPAL [--role]` and `owner remove ID PRINCIPAL`.
    package struct SetOwner: AdminRequest {
        package var id: String
        package var principal: String
        /// The role to give; nil removes the principal.
        package var role: String?
        package init(id: String, principal: String, role: String?) {
            self.id = id
            self.principal = principal
            self.role = role
        }
        package static let route = AdminRoute(
            "owner.add", .put, "/plugins/{id}/owners/{principal}", .write,
            summary: "Add an owner or maintainer to a plug-in, change their role, or without a role remove them (never the last owner).",
            parameters: [
                .path("id", "The plug-in id."), .path("principal", "The principal."),
                AdminParameter("role", .body, "owner or maintainer; absent to remove."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            guard let role else { return AdminReply(try board.removeOwner(id, principal: principal, by: actor)) }
            guard let parsed = PluginOwner.Role(rawValue: role) else {
                throw BoardError(.invalidInput, "'\(Validate.escaped(role))' is not a role; use owner or maintainer")
            }
            return AdminReply(try board.addOwner(id, principal: principal, role: parsed, by: actor))
        }
    }

    /// `owner list ID`.
    package struct Owners: AdminRequest {
        package var id: String
        package init(id: String) { self.id = id }
        package static let route = AdminRoute(
            "owner.list", .get, "/plugins/{id}/owners", .read, summary: "List a plug-in's owners and maintainers.",
            parameters: [.path("id", "The plug-in id.")], response: "OwnerList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[PluginOwner]> {
            AdminReply(try board.owners(of: id))
        }
    }
}

/// Signature policies and trusted keys: the requests behind `plugboard policy …`, `signer …` and
/// `plugin add-signature`.
package enum TrustRequests {
    /// `policy set --signatures off|warn|require`.
    package struct SetPolicy: AdminRequest {
        package var env: String
        package var signatures: String
        package init(env: String, signatures: String) {
            self.env = env
            self.signatures = signatures
        }
        package static let route = AdminRoute(
            "policy.set", .put, "/policies/{env}", .write, summary: "Set the signature policy of an environment (admins).",
            parameters: [
                .path("env", "The environment."), AdminParameter("signatures", .body, required: true, "off, warn or require."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.environment(env)
            guard let policy = SignaturePolicy(rawValue: signatures) else {
                throw BoardError(.invalidInput, "'\(Validate.escaped(signatures))' is not a signature policy; use off, warn or require")
            }
            return AdminReply(try board.setSignaturePolicy(policy, environment: env, by: actor))
        }
    }

    /// `policy show`.
    package struct Policies: AdminRequest {
        package init() {}
        package static let route = AdminRoute(
            "policy.show", .get, "/policies", .read, summary: "Every environment's signature policy.", response: "PolicyList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[EnvironmentSignaturePolicy]> {
            AdminReply(try board.signaturePolicies())
        }
    }

    /// `signer add ID KEY` and `signer add --all KEY`.
    package struct AddSigner: AdminRequest {
        /// The plug-in; nil trusts the key for every plug-in.
        package var id: String?
        package var publicKey: String
        package var name: String?
        package init(id: String?, publicKey: String, name: String?) {
            self.id = id
            self.publicKey = publicKey
            self.name = name
        }
        package static let route = AdminRoute(
            "signer.add", .post, "/signers", .write,
            summary: "Trust a public key to sign one plug-in's releases, or without an id every plug-in's (admins).",
            parameters: [
                AdminParameter("id", .body, "The plug-in id; absent for every plug-in."),
                AdminParameter("public_key", .body, required: true, "The Ed25519 public key in base64."),
                AdminParameter("name", .body, "Whose key it is, for people."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.addSigner(pluginID: id, publicKey: publicKey, name: name, by: actor))
        }
    }

    /// `signer list [ID]`.
    package struct Signers: AdminRequest {
        package var id: String?
        package init(id: String?) { self.id = id }
        package static let route = AdminRoute(
            "signer.list", .get, "/signers", .read, summary: "List trusted keys: all, or those that may sign one plug-in.",
            parameters: [AdminParameter("id", .query, "Only the keys that may sign this plug-in.")], response: "SignerList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[Signer]> {
            AdminReply(try board.signers(pluginID: id))
        }
    }

    /// `signer revoke KEY_ID --reason`.
    package struct RevokeSigner: AdminRequest {
        package var keyID: String
        package var reason: String
        package init(keyID: String, reason: String) {
            self.keyID = keyID
            self.reason = reason
        }
        package static let route = AdminRoute(
            "signer.revoke", .post, "/signers/{key_id}/revoke", .write,
            summary: "Revoke a key: no signature it made counts any more, including earlier ones.",
            parameters: [.path("key_id", "The key id."), AdminParameter("reason", .body, required: true, "Why.")],
            response: "ChangeResult", lane: .stop)
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.reason(reason)
            return AdminReply(try board.revokeSigner(keyID: keyID, reason: reason, by: actor))
        }
    }

    /// `plugin add-signature ID VERSION FILE`: the signature file's text.
    package struct AddSignature: AdminRequest {
        package var id: String
        package var version: String
        package var signature: String
        /// What the file was called, for sentences.
        package var file: String
        package init(id: String, version: String, signature: String, file: String) {
            self.id = id
            self.version = version
            self.signature = signature
            self.file = file
        }
        package static let route = AdminRoute(
            "plugin.add-signature", .post, "/plugins/{id}/versions/{version}/signatures", .write,
            summary: "Add a signature to a registered release (its owners, maintainers or an admin).",
            parameters: [
                .path("id", "The plug-in id."), .path("version", "The version."),
                AdminParameter("signature", .body, required: true, "The signature file's text (plugboard plugin sign)."),
                AdminParameter("file", .body, required: true, "The name of the file it came from, for messages."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.pluginID(id)
            let parsedVersion = try AdminParse.version(version)
            let parsed = try ReleaseSignature.parse(Data(signature.utf8), named: file)
            return AdminReply(try board.addSignature(id, version: parsedVersion, parsed, by: actor))
        }
    }
}
