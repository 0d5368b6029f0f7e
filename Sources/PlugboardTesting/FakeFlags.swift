public import PlugboardPluginAPI
import Synchronization

/// A `FlagEvaluating` with values you set, for plug-in tests.
///
/// ```swift
/// let flags = FakeFlags(["new-sync": true])
/// flags.set("batch-size", to: .int(50))
/// ```
public final class FakeFlags: FlagEvaluating {
    /// A flag's value in the fake.
    public enum Value: Sendable, Hashable {
        case bool(Bool)
        case string(String)
        case int(Int)
        case double(Double)
    }

    private let values: Mutex<[String: Value]>
    private let calls: Mutex<[String]>

    /// Creates a fake with boolean flags.
    public init(_ booleans: [String: Bool] = [:]) {
        values = Mutex(booleans.mapValues(Value.bool))
        calls = Mutex([])
    }

    /// Sets a flag's value.
    public func set(_ flag: String, to value: Value) { values.withLock { $0[flag] = value } }

    /// Removes a flag, so that evaluating it reports `FLAG_NOT_FOUND`.
    public func remove(_ flag: String) { _ = values.withLock { $0.removeValue(forKey: flag) } }

    /// The names of the flags evaluated so far, in order.
    public var evaluated: [String] { calls.withLock { $0 } }

    public func bool(_ flag: String, default value: Bool, context: [String: String]) -> FlagResolution<Bool> {
        resolve(flag, value) { if case .bool(let v) = $0 { v } else { nil } }
    }

    public func string(_ flag: String, default value: String, context: [String: String]) -> FlagResolution<String> {
        resolve(flag, value) { if case .string(let v) = $0 { v } else { nil } }
    }

    public func int(_ flag: String, default value: Int, context: [String: String]) -> FlagResolution<Int> {
        resolve(flag, value) { if case .int(let v) = $0 { v } else { nil } }
    }

    public func double(_ flag: String, default value: Double, context: [String: String]) -> FlagResolution<Double> {
        resolve(flag, value) { if case .double(let v) = $0 { v } else if case .int(let v) = $0 { Double(v) } else { nil } }
    }

    private func resolve<T: Sendable>(_ flag: String, _ fallback: T, _ extract: (Value) -> T?) -> FlagResolution<T> {
        calls.withLock { $0.append(flag) }
        guard let stored = values.withLock({ $0[flag] }) else {
            return FlagResolution(
                value: fallback, reason: .error, errorCode: .flagNotFound, errorMessage: "flag \(flag) is not defined in FakeFlags")
        }
        guard let value = extract(stored) else {
            return FlagResolution(
                value: fallback, reason: .error, errorCode: .typeMismatch, errorMessage: "flag \(flag) holds \(stored), not \(T.self)")
        }
        return FlagResolution(value: value, reason: .static)
    }
}
