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
/// The OS user is always the actor of record and the principal whose permissions are checked.
/// `onBehalfOf` (the CLI's `--as`) is recorded beside it in the audit log, never instead of it.
public struct Actor: Sendable, Hashable, Codable {
    /// The OS user running the process (from the effective uid).
    public let osUser: String
    /// The principal automation declared it acts for (`--as`), if any.
    public let onBehalfOf: String?

    /// Creates an actor. Prefer ``current(onBehalfOf:)``; this initialiser is for hosts and tests.
    public init(osUser: String, onBehalfOf: String? = nil) throws(BoardError) {
        try Validate.principal(osUser, field: "OS user")
        if let onBehalfOf { try Validate.principal(onBehalfOf, field: "--as") }
        self.osUser = osUser
        self.onBehalfOf = onBehalfOf
    }

    /// The actor for this process: the effective OS user, and an optional declared principal.
    public static func current(onBehalfOf: String? = nil) throws(BoardError) -> Actor {
        try Actor(osUser: currentOSUser(), onBehalfOf: onBehalfOf)
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

/// UTC ISO-8601 timestamps with milliseconds, the one time format of the board.
public enum Timestamp {
    /// The current time, for example `2026-11-21T18:40:00.123Z`.
    public static func now() -> String { format(Date()) }

    /// Formats a date as UTC ISO-8601 with milliseconds.
    public static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!))
    }

    /// Parses an ISO-8601 time (`2026-11-21T18:40:00Z`, with or without fraction) or a date (`2026-11-21`, UTC midnight).
    public static func parse(_ text: String) -> Date? {
        let utc = TimeZone(identifier: "UTC")!
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: utc).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(timeZone: utc).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(timeZone: utc).year().month().day().parse(text) { return date }
        return nil
    }
}
