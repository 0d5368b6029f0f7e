import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who is making a change: the OS user of record, and optionally the principal automation acts for.
///
/// The OS user is always the actor of record and the one whose permissions are checked. `onBehalfOf` (the CLI's
/// `--as`) is recorded beside it in the audit log, never instead of it.
public struct Principal: Sendable, Hashable, Codable {
    /// The OS user running the process (from the effective uid).
    public let osUser: String
    /// The principal automation declared it acts for (`--as`), if any.
    public let onBehalfOf: String?
    /// How a change arrived when it did not come from a process on the board's machine: for the operations API,
    /// `token NAME from ADDRESS` (the access token's name and the client's address). Recorded in the audit log.
    public let via: String?
    /// The name of the access token the change arrived with (the operations API), whose principal is ``osUser``; nil for a
    /// process on the board's machine. A token made with it records it as its parent.
    public let accessToken: String?

    /// Creates a principal. Prefer ``current(onBehalfOf:)``; this initialiser is for hosts, servers and tests.
    ///
    /// - Parameters:
    ///   - osUser: The actor of record: the OS user, or for the operations API the access token's principal.
    ///   - onBehalfOf: The principal automation declares it acts for (`--as`), recorded beside the actor.
    ///   - via: How the change arrived (see ``via``); at most 512 characters.
    ///   - accessToken: The access token the change arrived with, if any (see ``accessToken``).
    public init(osUser: String, onBehalfOf: String? = nil, via: String? = nil, accessToken: String? = nil) throws(BoardError) {
        try Validate.principal(osUser, field: "OS user")
        // Plugboard's own principals act on the board's machine only: an access token of one (made before the names were
        // reserved, or restored with an old board) acts as nobody.
        if accessToken != nil, osUser.lowercased().hasPrefix(Validate.reservedPrincipalPrefix) {
            throw BoardError(
                .notAllowed,
                "the access token '\(Validate.printable(accessToken ?? ""))' is of \(Validate.printable(osUser)), a principal Plugboard itself acts as; no token may act as it, so revoke it"
            )
        }
        if let onBehalfOf { try Validate.personPrincipal(onBehalfOf, field: "--as") }
        if let accessToken, accessToken.isEmpty || accessToken.utf8.count > 128 || accessToken.contains(where: { $0.isNewline }) {
            throw BoardError(.invalidInput, "an access token's name must be one line of 1-128 characters")
        }
        if let via, via.isEmpty || via.utf8.count > 512 || via.contains(where: { $0.isNewline }) {
            throw BoardError(.invalidInput, "how a change arrived must be one line of 1-512 characters")
        }
        self.osUser = osUser
        self.onBehalfOf = onBehalfOf
        self.via = via
        self.accessToken = accessToken
    }

    /// The principal of this process: the effective OS user, and an optional declared principal.
    public static func current(onBehalfOf: String? = nil) throws(BoardError) -> Principal {
        try Principal(osUser: currentOSUser(), onBehalfOf: onBehalfOf)
    }

    /// The name of the effective OS user, or `uid:N` when the uid has no passwd entry.
    ///
    /// The name is looked up once per effective uid in a process (a passwd lookup reads `/etc/passwd` or asks NSS,
    /// about 5 µs, and every audited change of a plug-in's secure storage needs it); a process whose effective uid
    /// changes looks the new one up. A name changed in the passwd database shows in a process started after.
    public static func currentOSUser() -> String {
        let uid = geteuid()
        if let known = osUserNames.withLock({ $0 }), known.uid == uid { return known.name }
        // A failed lookup (no entry, or NSS failing for a moment) is not kept: the next change asks again.
        guard let entry = getpwuid(uid), let pwName = entry.pointee.pw_name else { return "uid:\(uid)" }
        let name = String(cString: pwName)
        osUserNames.withLock { $0 = (uid, name) }
        return name
    }

    /// The last effective uid looked up, and its name.
    private static let osUserNames = Mutex<(uid: uid_t, name: String)?>(nil)
}
