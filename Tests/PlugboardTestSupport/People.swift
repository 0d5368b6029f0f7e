import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// People who are people on the board's machine: the person behind an access token is the OS user who made the first
/// token of its chain as themselves, so a test with several people runs the CLI as several OS users (uids without a
/// passwd entry, named `uid:N` on the board, given to `setpriv`; the tests need root, see ``canSwitchUser``).
extension Sandbox {
    /// `setpriv` as the OS user `uid`, with a group of its own and no other.
    public static func asUser(_ uid: UInt32) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"]
    }

    /// Lets other OS users write this scratch board for a while: its folder and files open to everyone.
    public func openToOtherUsers() {
        chmod(root.path, 0o777)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: board + suffix) {
            chmod(board + suffix, 0o666)
        }
    }

    /// Closes the board again to every user but root (the board's maker), whoever made its sidecars meanwhile.
    public func closeToOtherUsers() {
        chmod(root.path, 0o755)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: board + suffix) {
            chown(board + suffix, 0, 0)
            chmod(board + suffix, 0o600)
        }
    }

    /// The secret of a first access token of `principal` that the OS user `uid` makes on the board's machine as
    /// themselves, so that `uid:N` is the person behind it and behind every token made with it. The board's maker makes
    /// that OS user a board admin for the time it takes (only an admin makes a token for another principal), then
    /// removes it again.
    public func personalToken(for principal: String, uid: UInt32, name: String = "first") async throws -> String {
        let user = "uid:\(uid)"
        try await ok("admin", "add", user)
        openToOtherUsers()
        let created = try await run(
            ["access-token", "create", "--principal", principal, "--name", name, "--json"], prefix: Self.asUser(uid))
        #expect(created.status == 0, "\(user): access-token create --principal \(principal): \(created)")
        closeToOtherUsers()
        try await ok("admin", "remove", user)
        return try #require((try created.json() as? [String: Any])?["token"] as? String, "\(created)")
    }
}
