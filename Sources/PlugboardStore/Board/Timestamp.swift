import Foundation

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
