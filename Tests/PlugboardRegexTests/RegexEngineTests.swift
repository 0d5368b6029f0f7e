import Foundation
import PlugboardTestSupport
import Testing

@testable import PlugboardRegex

/// The regex engine itself: no backtracking (its work is counted, not timed), size refusals, and answers recorded from
/// Unleash's engine for patterns whose edge cases the differential test's random values do not reach.
@Suite("Regex engine (linear time, Rust regex semantics)", .timeLimit(.hangGuard))
struct RegexEngineTests {
    /// The answer Unleash gives for a REGEX constraint: a refused pattern never matches.
    static func answer(_ pattern: String, _ subject: String, caseInsensitive: Bool = false) -> Bool {
        guard let regex = try? UnleashRegex(pattern, caseInsensitive: caseInsensitive) else { return false }
        return regex.matches(subject)
    }

    static let longA = String(repeating: "a", count: 10_000)

    /// Patterns that take a backtracking engine seconds (NSRegularExpression: `(a+)+$` on 28 `a`s and `!` took 4 s).
    static let redos: [(pattern: String, subject: String, matches: Bool)] = [
        ("(a+)+$", longA + "!", false),
        ("^(a+)+$", longA, true),
        ("(.*a){20}", String(repeating: "a", count: 19) + String(repeating: "b", count: 10_000), false),
        ("(.*a){20}", String(repeating: "ab", count: 5_000), true),
        ("(a|aa)+$", longA + "!", false),
        ("(x+x+)+y", String(repeating: "x", count: 10_000), false),
        ("(a*)*b", longA, false),
        ("(\\w+\\s?)+$", String(repeating: "word ", count: 2_000) + "!", false),
    ]

    @Test("ReDoS patterns: the work is at most 2 × (length + 1) × program size, and grows linearly with the input")
    func linearWork() throws {
        for (pattern, subject, expected) in Self.redos {
            let regex = try UnleashRegex(pattern, caseInsensitive: false)
            let run = regex.run(subject)
            #expect(run.matched == expected, "\(pattern)")
            let length = subject.unicodeScalars.count
            #expect(run.steps <= 2 * (length + 1) * regex.programSize, "\(pattern): \(run.steps) steps")
            // Doubling the input at most doubles the work (plus a little for the ends).
            let doubled = regex.run(subject + subject)
            #expect(doubled.steps <= 2 * run.steps + 4 * regex.programSize, "\(pattern): \(run.steps) then \(doubled.steps) steps")
        }
    }

    @Test("a counted repetition of a star compiles to the star: the work per character does not grow with the count")
    func countedStarsAreOneStar() throws {
        // Found by Tools/Drills/drill stress: `(.*){1,1000}(.*){1,1000}b` took seconds per thousand characters.
        let regex = try UnleashRegex("(.*){1,1000}(.*){1,1000}b", caseInsensitive: false)
        #expect(regex.programSize < 30, "\(regex.programSize) instructions")
        let input = String(repeating: "a", count: 5_000)
        let run = regex.run(input)
        #expect(!run.matched)
        #expect(run.steps <= 2 * (input.count + 1) * regex.programSize)
        #expect(try UnleashRegex("(.*){1,1000}b", caseInsensitive: false).matches("xxb"))
        // `{0}` of a star is the empty string, not the star.
        #expect(try !UnleashRegex("^(a*){0}b$", caseInsensitive: false).matches("aab"))
        #expect(try UnleashRegex("^(a*){0}b$", caseInsensitive: false).matches("b"))
    }

    @Test("an anchored pattern stops when no thread is left")
    func anchoredStopsEarly() throws {
        let regex = try UnleashRegex("^user-[0-9]+@example\\.com$", caseInsensitive: false)
        #expect(regex.matches("user-42@example.com"))
        let run = regex.run("admin" + Self.longA)
        #expect(!run.matched)
        #expect(run.steps < 10 * regex.programSize)
    }

    @Test("repetition counts over 1000 and programs over 100,000 instructions are refused at compile time")
    func sizeLimits() throws {
        #expect(throws: RegexError.self) { try UnleashRegex("a{1001}", caseInsensitive: false) }
        do {
            _ = try UnleashRegex("a{1001}", caseInsensitive: false)
        } catch {
            #expect(error.message == "'a{1001}' is not a valid regular expression: a repetition count is over 1000")
        }
        do {
            _ = try UnleashRegex("((a{1000}){1000}){1000}", caseInsensitive: false)
            Issue.record("((a{1000}){1000}){1000} was accepted")
        } catch {
            #expect(error.message.contains("is too large"), "\(error.message)")
        }
        #expect(throws: RegexError.self) { try UnleashRegex("(a{1000}){1000}", caseInsensitive: false) }
        #expect(throws: RegexError.self) { try UnleashRegex("a{2,1001}", caseInsensitive: false) }
        let thousand = try UnleashRegex("a{1000}", caseInsensitive: false)
        #expect(thousand.matches(String(repeating: "a", count: 1000)))
        #expect(!thousand.matches(String(repeating: "a", count: 999)))
        #expect(try UnleashRegex("(a{100}){100}", caseInsensitive: false).programSize <= RegexProgram.instructionLimit)
    }

    @Test("one compiled pattern is used from many threads at once")
    func concurrentMatching() async throws {
        let regex = try UnleashRegex("^user-[0-9]+@example\\.com$", caseInsensitive: true)
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask { regex.matches(index.isMultiple(of: 2) ? "USER-\(index)@example.com" : "user-\(index)@example.org") }
            }
            var results: [Bool] = []
            for await result in group { results.append(result) }
            return results
        }
        #expect(results.filter { $0 }.count == 32)
    }

    /// Pattern, value, and what yggdrasil-engine 2.0.0 (Unleash's engine, Rust's regex) answered; a refused pattern
    /// answers false there as here. These reach edge cases the differential test's random values do not.
    static let recordedAnswers: [(pattern: String, subject: String, matches: Bool)] = [
        ("a{", "a{", false),
        ("{", "{", false),
        ("a{,2}", "a{,2}", false),
        ("a{,2}", "aa", false),
        ("[--/]", ".", false),
        ("[--/]", "/", true),
        ("(?i)k", "\u{212A}", true),
        ("(?i)s", "\u{17F}", true),
        ("(?i)\u{131}", "I", false),
        ("(?i)\u{131}", "i", false),
        ("(?i)\u{130}", "i", false),
        ("(?i)\u{3C3}", "\u{3C2}", true),
        ("(?i)[a-z]", "\u{212A}", true),
        ("(?i)[^a-z]", "\u{212A}", false),
        ("(?i)\\p{Lu}", "a", true),
        ("(?i)\\P{Lu}", "a", false),
        ("\\p{Greek}", "\u{3B1}", true),
        ("\\p{Han}", "\u{4E2D}", true),
        ("\\p{Emoji}", "\u{1F600}", true),
        ("\\p{Emoji}", "1", true),
        ("\\b{2}", "ab", true),
        ("(?x)[ ]", " ", false),
        ("(?x)[ a]", "a", true),
        ("a{2 , 3}", "aa", true),
        ("(?i-)a", "a", false),
        ("(?-)a", "a", false),
        ("(?)a", "a", false),
        ("(?P<a_b>x)", "x", true),
        ("(?P<a>x)(?P<a>y)", "xy", false),
        ("(?P<1a>x)", "x", false),
        ("(?<\u{E9}>x)", "x", true),
        ("^*a", "a", true),
        ("(?i)*", "a", false),
        ("a|*", "a", false),
        ("()*a", "a", true),
        ("\\pL", "\u{E9}", true),
        ("\\p{L}", "1", false),
        ("[\\w&&\\d]", "5", true),
        ("[a-c~~b-d]", "b", false),
        ("[a-c~~b-d]", "d", true),
        ("(?-u)\\xFF", "\u{FF}", false),
        ("(?-u)\u{E9}", "\u{E9}", true),
        ("(?-u)[\u{E9}]", "\u{E9}", false),
        ("(?-u:[^\\x00-\\x7F])", "\u{E9}", false),
        ("(?R)^b$", "a\r\nb", false),
        ("(?Rm)^b$", "a\r\nb", true),
        ("(?Rm)a$", "a\r\nb", true),
        ("(?R).", "\r", false),
        ("(?-u)\\B", "\u{E9}", true),
        ("\\p{isGreek}", "\u{3B1}", true),
        ("\\p{Script_Extensions=Greek}", "\u{3B1}", true),
        ("\\p{Alphabetic}", "a", true),
        ("\\p{alpha}", "a", true),
        ("\\p{White_Space}", " ", true),
        ("\\p{any}", "x", true),
        ("\\p{gc=Lu}", "A", true),
        ("\\p{gc:Lu}", "A", true),
        ("\\p{gc!=Lu}", "A", false),
        ("\\p{Extended_Pictographic}", "\u{1F600}", true),
        ("a{1000}", "a", false),
        ("(a{1000}){1000}", "a", false),
        ("\\w{1000}", "a", false),
        ("[[:alpha:]--[a]]", "a", false),
        ("(?i)[[:^alpha:]]", "a", false),
        ("[\\x{41}-\\x{43}]", "B", true),
        ("\\u{D800}", "a", false),
        ("\\x{110000}", "a", false),
        ("x{2,1}", "x", false),
        ("\\d", "\u{663}", true),
        ("\\w", "\u{663}", true),
        ("\\s", "\u{A0}", true),
        ("\\s", "\u{200B}", false),
        ("\\w", "\u{200D}", true),
        ("\\b\u{E9}", "\u{E9}", true),
        ("(?-u)\\b\u{E9}", "\u{E9}", false),
        ("\\<a", " a", true),
        ("a\\>", "a ", true),
        ("\\b{end-half}", "", true),
        ("\\b{ start }", "a", false),
        ("(?i)\u{1C5}", "\u{1C4}", true),
        ("(?i)\u{DF}", "\u{1E9E}", true),
        ("(?i)\u{FB01}", "FI", false),
        ("(?i)\\u{1F88}", "\u{1F80}", true),
        ("(?i)\u{AB70}", "\u{13A0}", true),
        ("(?i)\u{13A0}", "\u{AB70}", true),
        ("[^]", "a", false),
        ("[]", "a", false),
        ("a**", "aa", true),
        ("\\z", "", true),
        ("\\Q", "Q", false),
        ("\\\u{E9}", "\u{E9}", false),
        ("\\ ", " ", true),
        ("\\%", "%", true),
        ("\\<", "<", false),
        ("[\\<]", "<", false),
        ("[a-\\d]", "a", false),
        ("[\\n-\\r]", "\u{B}", true),
        ("[\\b]", "b", false),
        ("[.]", "a", false),
        ("(?x)a b # c\n c", "abc", true),
        ("(?x)a\\#", "a#", true),
        ("\\x{ 41 }", "A", false),
        ("\\x4 1", "A", false),
        ("(?x)\\x4 1", "A", true),
        ("\\p{ Greek }", "\u{3B1}", true),
        ("(?i)\\p{Ll}", "A", true),
        ("[\\p{L}--\\p{Lu}]", "A", false),
        ("(?i)[\\p{L}--\\p{Lu}]", "A", false),
        ("\\p{Cs}", "a", false),
        ("\\p{Cn}", "\u{378}", true),
        ("\\p{Co}", "\u{E000}", true),
        // Unicode 16, the crate's tables, not the standard library's Unicode 17: U+088F, U+11DE0 and U+A7CE are
        // unassigned in 16, and U+0295 is a lowercase letter in 16 (an "other" letter in 17).
        ("^\\w$", "\u{88F}", false),
        ("\\p{Cn}", "\u{88F}", true),
        ("^\\p{Ll}$", "\u{295}", true),
        ("^\\p{Lo}$", "\u{295}", false),
        ("^\\d$", "\u{11DE0}", false),
        ("^\\p{Lu}$", "\u{A7CE}", false),
        ("a\\b", "a\u{88F}", true),
        ("\\p{L}", "\u{88F}", false),
        ("^\\s$", "\u{3000}", true),
        ("^\\w$", "\u{295}", true),
        ("\\P{Assigned}", "\u{88F}", true),
        ("\\p{Other}", "\u{88F}", true),
        ("^\\p{Alphabetic}$", "\u{88F}", false),
        ("^\\p{Alphabetic}$", "a", true),
        // Binary properties the crate does not know are refused there (the standard library knows these two).
        ("\\p{Changes_When_NFKC_Casefolded}", "A", false),
        ("\\p{Full_Composition_Exclusion}", "\u{958}", false),
        ("\\p{CWKCF}", "A", false),
        ("\\p{Extended_Pictographic}", "\u{1F600}", true),
    ]

    @Test("edge cases agree with answers recorded from Unleash's engine")
    func recorded() {
        for (pattern, subject, expected) in Self.recordedAnswers {
            #expect(Self.answer(pattern, subject) == expected, "\(pattern) on \(subject.debugDescription)")
        }
    }

    @Test("the automaton answers as the Pike VM on every pattern of the differential file and many subjects")
    func automatonAgreesWithTheVM() throws {
        // The flag tests' differential file: its REGEX constraints are the patterns compared with Unleash's engine.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PlugboardFlagsTests/Fixtures/differential/features-regex.json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var patterns: [(String, Bool)] = Self.redos.map { ($0.pattern, false) }
        for feature in root["features"] as? [[String: Any]] ?? [] {
            let strategies = feature["strategies"] as? [[String: Any]] ?? []
            for constraint in strategies.flatMap({ $0["constraints"] as? [[String: Any]] ?? [] })
            where constraint["operator"] as? String == "REGEX" {
                let caseInsensitive = constraint["caseInsensitive"] as? Bool ?? false
                for pattern in (constraint["value"] as? String).map({ [$0] }) ?? constraint["values"] as? [String] ?? [] {
                    patterns.append((pattern, caseInsensitive))
                }
            }
        }
        var subjects = [
            "", "a", "abc", "ABC", "a cat b", "concatenate", "a\nb", "x\nfoo\ny", "x\n", "\r\n", "a\r", "\rb", "12", "12345",
            "user@example.com", "USER-12", "user-123", "beta", "x\nbeta\ny", "αβγ", "éa", "e\u{301}a", "straße", "STRASSE", "٣٤",
            "Σίσυφος", "hello  world", "word word!", "_a_", "a.b", "\u{10FFFF}", "\u{1F600}x", "\t", "ǅ", "K", "\u{212A}",
        ]
        var generator = SystemRandomNumberGenerator()
        let letters = Array("abcxyzABC019 _\n\r.@-éß\u{212A}")
        for _ in 0..<200 {
            subjects.append(String((0..<Int.random(in: 0...12, using: &generator)).map { _ in letters.randomElement(using: &generator)! }))
        }
        var withAutomaton = 0
        for (pattern, caseInsensitive) in patterns {
            guard let regex = try? UnleashRegex(pattern, caseInsensitive: caseInsensitive) else { continue }
            if regex.hasAutomaton { withAutomaton += 1 }
            for subject in subjects {
                #expect(regex.matches(subject) == regex.run(subject).matched, "\(pattern) on \(subject.debugDescription)")
            }
        }
        // Most patterns are small enough for an automaton; the comparison above is not vacuous.
        #expect(withAutomaton * 2 > patterns.count, "\(withAutomaton) of \(patterns.count) patterns have an automaton")
        print("regex automaton: \(withAutomaton) of \(patterns.count) patterns; \(subjects.count) subjects each")
    }
}
