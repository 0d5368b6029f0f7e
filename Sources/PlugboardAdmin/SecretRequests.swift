package import Foundation
import PlugboardBoardSecureStorage
package import PlugboardModel
import PlugboardSecureStorage
package import PlugboardStore

/// A plug-in's secrets through the admin API: stored, listed and deleted, never read (the API returns no secret's
/// plaintext; `plugboard secret get` runs on the board's machine). The requests behind `plugboard secret set|list|delete`.
package enum SecretRequests {
    /// `secret set --plugin ID KEY`: the value travels base64-encoded in the body, over the server's TLS.
    package struct Set: AdminRequest {
        package var id: String
        package var key: String
        /// The value's exact bytes, base64.
        package var valueBase64: String
        package init(plugin: String, key: String, value: Data) {
            self.id = plugin
            self.key = key
            valueBase64 = value.base64EncodedString()
        }
        package static let route = AdminRoute(
            "secret.set", .put, "/plugins/{id}/secrets/{key}", .write,
            summary: "Encrypt and store a secret of a plug-in (its owners, maintainers or an admin).",
            parameters: [
                .path("id", "The plug-in id."), .path("key", "The key name (not secret: stored in clear and audited)."),
                AdminParameter("value_base64", .body, required: true, "The value's bytes, base64."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            guard let value = Data(base64Encoded: valueBase64) else { throw BoardError(.invalidInput, "value_base64 is not base64") }
            let secrets = try BoardSecureStorage.open(board: board)
            return AdminReply(try secrets.setSecret(value, forKey: key, pluginID: id, by: actor))
        }
    }

    /// `secret list --plugin ID`: names and data key versions, never values.
    package struct List: AdminRequest {
        package var id: String
        package init(plugin: String) { self.id = plugin }
        package static let route = AdminRoute(
            "secret.list", .get, "/plugins/{id}/secrets", .read,
            summary: "List a plug-in's secrets: names and data key versions, never values.",
            parameters: [.path("id", "The plug-in id.")], response: "SecretList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[SecretEntry]> {
            AdminReply(try board.secretEntries(pluginID: id))
        }
    }

    /// `secret delete --plugin ID KEY`.
    package struct Delete: AdminRequest {
        package var id: String
        package var key: String
        package init(plugin: String, key: String) {
            self.id = plugin
            self.key = key
        }
        package static let route = AdminRoute(
            "secret.delete", .delete, "/plugins/{id}/secrets/{key}", .write, summary: "Delete a secret of a plug-in.",
            parameters: [.path("id", "The plug-in id."), .path("key", "The key name.")], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            let secrets = try BoardSecureStorage.open(board: board)
            return AdminReply(try secrets.deleteSecret(forKey: key, pluginID: id, by: actor))
        }
    }
}
