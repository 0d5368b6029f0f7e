import Foundation
import PlugboardRegex
import PlugboardVersioning

// Constraints: each compiled once per snapshot, with its validation problems.
extension FlagCompiler {
    /// The constraint's `value` as `parse` reads it (`kind` names what it needs, `isNot` what it failed to be); nil,
    /// recorded as switching the flag off, when there is none or `parse` refuses it.
    private mutating func constraintValue<T>(
        _ constraint: Constraint, _ op: ConstraintOperator, field: String, _ kind: String, _ parse: (String) -> T?, isNot: String? = nil
    ) -> T? {
        guard let text = constraint.value else {
            error("\(field) value", "\(op.rawValue) needs \(kind) in 'value'", .breaksFlag)
            return nil
        }
        guard let parsed = parse(text) else {
            error("\(field) value", "'\(text)' is not \(isNot ?? kind)", .breaksFlag)
            return nil
        }
        return parsed
    }

    /// Compiles a constraint; `nil` only when the problem switches the whole flag off (it is recorded).
    mutating func compileConstraint(_ constraint: Constraint, field: String) -> CompiledConstraint? {
        let contextField = ContextField(constraintName: constraint.contextName)
        let inverted = constraint.inverted ?? false
        let caseInsensitive = constraint.caseInsensitive ?? false
        func make(_ test: CompiledConstraint.Test) -> CompiledConstraint {
            CompiledConstraint(field: contextField, test: test, inverted: inverted)
        }
        if constraint.contextName.contains("\"") {
            error("\(field) contextName", "'\(constraint.contextName)' contains a double quote, which Unleash cannot evaluate", .breaksFlag)
            return nil
        }
        guard let op = ConstraintOperator(rawValue: constraint.operator) else {
            error("\(field) operator", "'\(constraint.operator)' is not a known operator", .breaksFlag)
            return nil
        }
        switch op {
        case .in, .notIn:
            let set = ExactStringSet(constraint.values ?? [])
            return make(op == .in ? .inList(set) : .notInList(set))
        case .strContains, .strStartsWith, .strEndsWith:
            guard let values = constraint.values, !values.isEmpty else {
                error("\(field) values", "\(op.rawValue) needs at least one value", .breaksFlag)
                return nil
            }
            let match: StringMatch = op == .strContains ? .contains : op == .strStartsWith ? .startsWith : .endsWith
            return make(.string(match, values: caseInsensitive ? values.map { $0.lowercased() } : values, caseInsensitive: caseInsensitive))
        case .numEq, .numGt, .numGte, .numLt, .numLte:
            guard let number = constraintValue(constraint, op, field: field, "a number", UnleashNumber.parseConstraintValue) else {
                return nil
            }
            let comparison: OrdinalComparison =
                switch op {
                case .numEq: .equal
                case .numGt: .greater
                case .numGte: .greaterOrEqual
                case .numLt: .less
                default: .lessOrEqual
                }
            return make(.number(comparison, number))
        case .dateAfter, .dateBefore:
            guard
                let instant = constraintValue(
                    constraint, op, field: field, "a date", UnleashDate.parseConstraintValue,
                    isNot: "a date-time like 2024-05-01T12:00:00.000Z")
            else { return nil }
            return make(.date(op == .dateAfter ? .greater : .less, instant))
        case .semverEq, .semverGt, .semverGte, .semverLt, .semverLte:
            guard let text = constraint.value else {
                error("\(field) value", "\(op.rawValue) needs a version in 'value'", .breaksFlag)
                return nil
            }
            let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            guard !trimmed.hasPrefix("v"), let version = SemanticVersion(parsing: trimmed) else {
                let hint = trimmed.hasPrefix("v") ? " (remove the leading 'v')" : ""
                error("\(field) value", "'\(text)' is not a semantic version\(hint)", .local)
                return make(.never)
            }
            let comparison: OrdinalComparison =
                switch op {
                case .semverEq: .equal
                case .semverGt: .greater
                case .semverGte: .greaterOrEqual
                case .semverLt: .less
                default: .lessOrEqual
                }
            return make(.semver(comparison, version))
        case .regex:
            // Unleash's engine reads the pattern from 'value' alone; without one it matches the empty pattern, which
            // every value of the field matches ('values' is never read for REGEX).
            if constraint.value == nil {
                let hint = constraint.values.map { $0.isEmpty ? "" : " ('values' is not read for REGEX)" } ?? ""
                error("\(field) value", "REGEX needs a regular expression in 'value'\(hint)", .local)
            }
            do {
                return make(.regex(try UnleashRegex(constraint.value ?? "", caseInsensitive: caseInsensitive)))
            } catch {
                self.error("\(field) value", error.message, .local)
                return make(.never)
            }
        case .inCIDR:
            guard let values = constraint.values, !values.isEmpty else {
                error("\(field) values", "IN_CIDR needs at least one address or CIDR range in 'values'", .local)
                return make(.never)
            }
            var networks: [IPNetwork] = []
            for value in values {
                if let network = IPNetwork(value) {
                    networks.append(network)
                } else {
                    error("\(field) values", "'\(value)' is not an IP address or CIDR range", .local)
                }
            }
            return make(.cidr(networks))
        }
    }
}
