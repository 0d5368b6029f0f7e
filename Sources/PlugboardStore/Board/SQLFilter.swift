import GRDB

/// The `WHERE` clause of a listing, made of the filters a caller gave: each condition with the value of its `?`.
struct SQLFilter {
    private var conditions: [String] = []
    private var values: [any DatabaseValueConvertible] = []

    /// Adds `condition`, whose one `?` is `value`, when there is a value; a nil value filters nothing.
    mutating func add(_ condition: String, _ value: (any DatabaseValueConvertible)?) {
        guard let value else { return }
        conditions.append(condition)
        values.append(value)
    }

    /// Adds `condition`, which takes no value.
    mutating func add(_ condition: String) { conditions.append(condition) }

    /// `WHERE a AND b`, or nothing without a condition.
    var clause: String { conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ") }

    /// The values of the conditions' `?`, in order.
    var arguments: StatementArguments { StatementArguments(values) }
}
