public import Foundation
import PlugboardFlags

/// UTC ISO-8601 timestamps with milliseconds, the one time format of the board.
public enum Timestamp {
    /// The current time, for example `2026-11-21T18:40:00.123Z`.
    public static func now() -> String { format(Date()) }

    /// Formats a date as UTC ISO-8601 with milliseconds.
    public static func format(_ date: Date) -> String {
        if let text = Milliseconds.format(date) { return text }
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: utc))
    }

    /// Parses an ISO-8601 time (`2026-11-21T18:40:00Z`, with or without fraction) or a date (`2026-11-21`, UTC midnight).
    public static func parse(_ text: String) -> Date? {
        if let date = Milliseconds.parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: utc).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(timeZone: utc).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(timeZone: utc).year().month().day().parse(text) { return date }
        return nil
    }

    private static let utc = TimeZone(identifier: "UTC")!
}

/// The board's own form, `YYYY-MM-DDTHH:MM:SS.mmmZ` for years 1970 to 9999, written and read by arithmetic on the
/// characters: what the board writes on every change and reads on every secure-storage read. Any other text or date
/// goes to Foundation's ISO-8601 style. Both give the same text and the same `Date`, bit for bit (tested on random
/// times against Foundation).
package enum Milliseconds {
    /// `date` in the board's form, or `nil` if its year is outside 1970...9999.
    package static func format(_ date: Date) -> String? {
        // Foundation's arithmetic, step by step (seconds since 2001, the fraction truncated to milliseconds), so
        // that the text is the one its ISO-8601 style writes for every date, rounding included.
        let reference = date.timeIntervalSinceReferenceDate
        guard reference >= -secondsFrom1970To2001, reference < 253_402_300_800 - secondsFrom1970To2001 else { return nil }
        let whole = reference.rounded(.down)
        let seconds = Int64(whole) + Int64(secondsFrom1970To2001)
        let days = seconds / 86_400
        var rest = seconds % 86_400
        let (year, month, day) = CivilDate.civil(days: days)
        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int64, _ offset: Int, _ width: Int) {
            var value = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(year, 0, 4)
        put(month, 5, 2)
        put(day, 8, 2)
        put(rest / 3600, 11, 2)
        rest %= 3600
        put(rest / 60, 14, 2)
        put(rest % 60, 17, 2)
        put(Int64((reference - whole) * 1000), 20, 3)
        for (offset, character) in separators { bytes[offset] = character }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The fixed characters of the board's form and where they are.
    private static let separators: [(Int, UInt8)] = [
        (4, UInt8(ascii: "-")), (7, UInt8(ascii: "-")), (10, UInt8(ascii: "T")), (13, UInt8(ascii: ":")), (16, UInt8(ascii: ":")),
        (19, UInt8(ascii: ".")), (23, UInt8(ascii: "Z")),
    ]

    /// The date of `text` if it is exactly in the board's form with valid fields, else `nil`.
    package static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 24, separators.allSatisfy({ bytes[$0.0] == $0.1 })
            else { return nil }
            func number(_ offset: Int, _ width: Int) -> Int64? {
                var value: Int64 = 0
                for index in offset..<offset + width {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int64(digit)
                }
                return value
            }
            guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
                let minute = number(14, 2), let second = number(17, 2), let millisecond = number(20, 3),
                year >= 1970, (1...12).contains(month), day >= 1, day <= CivilDate.daysInMonth(year: year, month: month),
                hour < 24, minute < 60, second < 60
            else { return nil }
            // Foundation's arithmetic: the start of the day since 2001, plus the time of day with its fraction.
            let dayStart = Double(CivilDate.days(year: year, month: month, day: day) * 86_400) - secondsFrom1970To2001
            let time = Double((hour * 60 + minute) * 60 + second) + Double(millisecond) / 1000
            return Date(timeIntervalSinceReferenceDate: dayStart + time)
        }
    }

    private static let secondsFrom1970To2001 = Date.timeIntervalBetween1970AndReferenceDate
}
