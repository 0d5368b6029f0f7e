import Foundation
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@Suite("timestamps", .timeLimit(.hangGuard))
struct TimestampTests {
    private let utc = TimeZone(identifier: "UTC")!

    /// What `Timestamp.parse` did before it read the board's form itself: Foundation's ISO-8601 styles, in turn.
    private func foundationParse(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: utc).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle(timeZone: utc).parse(text) { return date }
        return try? Date.ISO8601FormatStyle(timeZone: utc).year().month().day().parse(text)
    }

    /// The board's form is written and read by arithmetic; Foundation's ISO-8601 style is the reference.
    @Test func theBoardsFormMatchesFoundationOnRandomTimes() throws {
        var generator = SystemRandomNumberGenerator()
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: utc)
        var dates: [Date] = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400), Date(timeIntervalSince1970: 4_107_542_399.999),
            Date(timeIntervalSince1970: 253_402_300_799.999), Date(timeIntervalSince1970: 1_795_000_000.0009),
            Date(timeIntervalSince1970: 1_795_000_000.9995), Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: 253_402_300_800),
        ]
        for _ in 0..<20_000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: -1_000_000...260_000_000_000, using: &generator)))
        }
        for _ in 0..<5_000 {
            // Whole milliseconds, as the board stores them.
            dates.append(Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_102_444_800_000, using: &generator)) / 1000))
        }
        for date in dates {
            let text = Timestamp.format(date)
            #expect(text == date.formatted(style), "\(date.timeIntervalSince1970)")
            #expect(Timestamp.parse(text) == foundationParse(text), "\(text)")
        }
    }

    @Test func anythingElseIsParsedAsBefore() throws {
        #expect(Timestamp.parse("2026-11-21T18:40:00Z") != nil)
        #expect(Timestamp.parse("2026-11-21") != nil)
        for text in [
            "2026-11-21T18:40:00Z", "2026-11-21", "2024-02-29T23:59:59.999Z", "1969-12-31T23:59:59.999Z", "2026-11-21T18:40:00.5Z",
            "2023-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-00-01T00:00:00.000Z", "2026-04-31T00:00:00.000Z",
            "2026-11-21T24:00:00.000Z", "2026-11-21T18:60:00.000Z", "2026-11-21T18:40:00.00xZ", "2026-11-21 18:40:00.000Z",
            "", "not a time",
        ] {
            #expect(Timestamp.parse(text) == foundationParse(text), "\(text)")
        }
    }
}
