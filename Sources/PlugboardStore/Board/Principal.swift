import Foundation

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

    /// Creates a principal. Prefer ``current(onBehalfOf:)``; this initialiser is for hosts and tests.
    public init(osUser: String, onBehalfOf: String? = nil) throws(BoardError) {
        try Validate.principal(osUser, field: "OS user")
        if let onBehalfOf { try Validate.principal(onBehalfOf, field: "--as") }
        self.osUser = osUser
        self.onBehalfOf = onBehalfOf
    }

    /// The principal of this process: the effective OS user, and an optional declared principal.
    public static func current(onBehalfOf: String? = nil) throws(BoardError) -> Principal {
        try Principal(osUser: currentOSUser(), onBehalfOf: onBehalfOf)
    }

    /// The name of the effective OS user, or `uid:N` when the uid has no passwd entry.
    public static func currentOSUser() -> String {
        let uid = geteuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name {
            return String(cString: name)
        }
        return "uid:\(uid)"
    }
}
