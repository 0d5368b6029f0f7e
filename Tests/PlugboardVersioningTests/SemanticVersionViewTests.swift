import PlugboardTestSupport
import Testing

@testable import PlugboardVersioning

/// The allocation-free reader flag evaluation uses must accept and order exactly as ``SemanticVersion`` does.
@Suite("SemanticVersionView agrees with SemanticVersion", .timeLimit(.hangGuard))
struct SemanticVersionViewTests {
    static let texts: [String] = [
        "0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
        "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "2.1.0-beta.3", "3.0.0-alpha", "0.1.0-rc.2", "1.0.0+build.5",
        "1.0.0-alpha+001", "1.0.0-0.3.7", "1.0.0-x.7.z.92", "1.0.0-x-y-z.--", "18446744073709551615.0.0",
        "2.0.0-1", "2.0.0-01", "2.0.0-a.01", "2.0.0+01", "01.0.0", "1.02.0", "1.0.03", "1.0", "1", "", "1.0.0-",
        "1.0.0+", "1.0.0-a..b", "1.0.0+a..b", "1.0.0-é", "1.0.0 ", " 1.0.0", "v1.0.0", "1.0.0-beta+a+b", "1.0.0-a_b",
        "18446744073709551616.0.0", "1.0.0-alpha.beta.1", "1.0.0-alpha.1.1", "1.0.0-Alpha", "1.0.0-00", "1.0.0-0",
        "1.2.3-\u{301}", "1.2.3\r\n", "1.0.0-rc.1+build.1", "1.0.0-rc.1.x", "1.0.0-11.a", "1.0.0-9.a",
    ]

    @Test("accepts exactly what SemanticVersion(parsing:) accepts, with the same parts")
    func parsing() {
        for text in Self.texts {
            let view = SemanticVersionView(text)
            let version = SemanticVersion(parsing: text)
            #expect((view != nil) == (version != nil), "\(text)")
            #expect((SemanticVersionNumbers(text) != nil) == (version != nil), "\(text)")
            if let view, let version, let numbers = SemanticVersionNumbers(text) {
                #expect((view.major, view.minor, view.patch) == (version.major, version.minor, version.patch), "\(text)")
                #expect((numbers.major, numbers.minor, numbers.patch) == (version.major, version.minor, version.patch), "\(text)")
                #expect(String(decoding: Array(text.utf8)[numbers.prerelease], as: UTF8.self) == String(view.prerelease), "\(text)")
                #expect(String(view.prerelease) == version.prerelease.joined(separator: "."), "\(text)")
            }
        }
    }

    @Test("orders every pair as SemanticVersion does")
    func ordering() {
        let valid = Self.texts.compactMap { text in SemanticVersion(parsing: text).map { (text, $0) } }
        for (text, version) in valid {
            let view = SemanticVersionView(text)!
            for (_, other) in valid {
                let expected = version < other ? -1 : (version == other ? 0 : 1)
                #expect(view.compare(to: other) == expected, "\(text) vs \(other)")
                // Same numbers, both pre-releases: the joined identifiers order as the array does.
                if (view.major, view.minor, view.patch) == (other.major, other.minor, other.patch), !view.prerelease.isEmpty,
                    !other.prerelease.isEmpty
                {
                    #expect(view.comparePrerelease(to: other.prerelease.joined(separator: ".")) == expected, "\(text) vs \(other)")
                }
            }
        }
    }
}
