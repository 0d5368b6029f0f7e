public import PlugboardVersioning

extension SemanticVersion {
    /// A text key whose byte order is SemVer precedence, stored as `plugin_versions.sort_key` so that
    /// `ORDER BY sort_key` sorts versions correctly in plain SQL.
    ///
    /// Format: MAJOR, MINOR and PATCH zero-padded to 20 digits and joined by `.`, then `~` for a release or
    /// `-` followed by each pre-release identifier — numeric ones as `0` + their 4-digit length + digits,
    /// alphanumeric ones as `1` + the identifier — each ended by a space. `-` sorts before `~`, numeric before
    /// alphanumeric, shorter numbers before longer ones, and a space before any identifier character, which
    /// gives exactly the ordering of SemVer §11.
    public var precedenceKey: String {
        func pad(_ value: UInt64, to width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var key = "\(pad(major, to: 20)).\(pad(minor, to: 20)).\(pad(patch, to: 20))"
        guard isPrerelease else { return key + "~" }
        key += "-"
        for identifier in prerelease {
            if identifier.allSatisfy({ $0.isASCII && $0.isNumber }) {
                key += "0" + pad(UInt64(identifier.count), to: 4) + identifier
            } else {
                key += "1" + identifier
            }
            key += " "
        }
        return key
    }
}
