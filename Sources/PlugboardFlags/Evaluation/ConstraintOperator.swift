/// The constraint operators Unleash defines, by their wire names.
public enum ConstraintOperator: String, Sendable, Hashable, CaseIterable {
    /// The field is one of `values` (exact, case-sensitive; a missing field is not in the list).
    case `in` = "IN"
    /// The field is none of `values` (a missing field counts as not in the list).
    case notIn = "NOT_IN"
    /// The field contains one of `values`.
    case strContains = "STR_CONTAINS"
    /// The field starts with one of `values`.
    case strStartsWith = "STR_STARTS_WITH"
    /// The field ends with one of `values`.
    case strEndsWith = "STR_ENDS_WITH"
    /// The field, as a number, equals `value`.
    case numEq = "NUM_EQ"
    /// The field, as a number, is greater than `value`.
    case numGt = "NUM_GT"
    /// The field, as a number, is greater than or equal to `value`.
    case numGte = "NUM_GTE"
    /// The field, as a number, is less than `value`.
    case numLt = "NUM_LT"
    /// The field, as a number, is less than or equal to `value`.
    case numLte = "NUM_LTE"
    /// The field, as a date (default: now), is after `value`.
    case dateAfter = "DATE_AFTER"
    /// The field, as a date (default: now), is before `value`.
    case dateBefore = "DATE_BEFORE"
    /// The field, as a semantic version, equals `value`.
    case semverEq = "SEMVER_EQ"
    /// The field, as a semantic version, is greater than `value`.
    case semverGt = "SEMVER_GT"
    /// The field, as a semantic version, is greater than or equal to `value`.
    case semverGte = "SEMVER_GTE"
    /// The field, as a semantic version, is less than `value`.
    case semverLt = "SEMVER_LT"
    /// The field, as a semantic version, is less than or equal to `value`.
    case semverLte = "SEMVER_LTE"
    /// The regular expression `value` (or any of `values`) matches somewhere in the field.
    case regex = "REGEX"
    /// The field is an IP address inside one of the CIDR ranges or addresses in `values`.
    case inCIDR = "IN_CIDR"
}
