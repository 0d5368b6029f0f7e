/// One instruction of a compiled pattern (a Thompson NFA state).
struct RegexInstruction: Sendable {
    enum Operation: UInt8, Sendable {
        /// Consumes the code point `a`.
        case scalar
        /// Consumes a code point of the set `sets[a]`.
        case set
        /// Continues at the next instruction when the assertion `a` (a `RegexAssertion` raw value) holds.
        case assertion
        /// Continues at both `a` and `b`.
        case split
        /// Continues at `a`.
        case jump
        /// The pattern has matched.
        case match
    }

    var operation: Operation
    var a: UInt32 = 0
    var b: UInt32 = 0
}

/// A code point set as the matcher tests it: a 128-bit map for ASCII and sorted ranges for the rest.
struct ScalarMatcher: Sendable {
    private let asciiLow: UInt64
    private let asciiHigh: UInt64
    /// The ranges above ASCII, flattened: first, last, first, last…
    private let bounds: [UInt32]

    init(_ set: ScalarSet) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        var bounds: [UInt32] = []
        for range in set.ranges {
            if range.lowerBound < 128 {
                for value in range.lowerBound...min(range.upperBound, 127) {
                    if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
                }
            }
            if range.upperBound >= 128 {
                bounds.append(max(range.lowerBound, 128))
                bounds.append(range.upperBound)
            }
        }
        asciiLow = low
        asciiHigh = high
        self.bounds = bounds
    }

    @inline(__always)
    func contains(_ value: UInt32) -> Bool {
        if value < 64 { return asciiLow & (1 << UInt64(value)) != 0 }
        if value < 128 { return asciiHigh & (1 << UInt64(value - 64)) != 0 }
        return bounds.withUnsafeBufferPointer { bounds in
            var low = 0
            var high = bounds.count / 2
            while low < high {
                let middle = (low + high) / 2
                if bounds[2 * middle + 1] < value {
                    low = middle + 1
                } else if bounds[2 * middle] > value {
                    high = middle
                } else {
                    return true
                }
            }
            return false
        }
    }
}

/// A compiled pattern: a Thompson NFA as a list of instructions, run by `RegexProgram.run(_:)` (a Pike VM).
///
/// Compilation refuses programs over `instructionLimit` instructions, as Rust's regex refuses NFAs over its size
/// limit (10 MB by default); the size is first computed from the tree (`RegexNode.programSize`), so a pattern such
/// as `((a{1000}){1000}){1000}` is refused without building anything.
struct RegexProgram: Sendable {
    /// The most instructions a compiled pattern may have.
    static let instructionLimit = 100_000

    let instructions: [RegexInstruction]
    let sets: [ScalarMatcher]
    /// Whether every match must start at the beginning of the text (`^…` or `\A…`), so that the search stops as
    /// soon as no thread is left.
    let anchoredAtStart: Bool
    /// The same program as a deterministic automaton, when it is small enough (`RegexDFA`).
    private(set) var dfa: RegexDFA?

    /// Compiles `node`; throws when the program would be over `instructionLimit` instructions.
    static func compile(_ parsed: RegexNode, pattern: String) throws(RegexError) -> RegexProgram {
        let node = parsed.simplified()
        let tooLarge = RegexError(
            "'\(pattern)' is not a valid regular expression: it is too large (over \(instructionLimit) instructions once compiled)")
        guard node.programSize(limit: instructionLimit) + 1 <= instructionLimit else { throw tooLarge }
        var compiler = Compiler()
        guard compiler.emit(node) else { throw tooLarge }
        compiler.append(RegexInstruction(operation: .match))
        var program = RegexProgram(
            instructions: compiler.instructions, sets: compiler.sets.map(ScalarMatcher.init), anchoredAtStart: isAnchoredAtStart(node))
        program.dfa = RegexDFA(program: program, sets: compiler.sets)
        return program
    }

    private static func isAnchoredAtStart(_ node: RegexNode) -> Bool {
        switch node {
        case .assertion(.startText): true
        case .concatenation(let nodes): nodes.first.map(isAnchoredAtStart) ?? false
        case .alternation(let nodes): nodes.allSatisfy(isAnchoredAtStart)
        case .repetition(let inner, let low, _): low > 0 && isAnchoredAtStart(inner)
        default: false
        }
    }

    /// Emits instructions for a tree; every fragment falls through to the instruction after it.
    private struct Compiler {
        var instructions: [RegexInstruction] = []
        var sets: [ScalarSet] = []
        var setIndex: [[ClosedRange<UInt32>]: UInt32] = [:]

        var next: UInt32 { UInt32(instructions.count) }

        @discardableResult
        mutating func append(_ instruction: RegexInstruction) -> Int {
            instructions.append(instruction)
            return instructions.count - 1
        }

        /// Returns false when the program grows over the limit.
        mutating func emit(_ node: RegexNode) -> Bool {
            if instructions.count > RegexProgram.instructionLimit { return false }
            switch node {
            case .empty:
                return true
            case .scalar(let value):
                append(RegexInstruction(operation: .scalar, a: value))
            case .set(let set):
                if let single = set.singleScalar {
                    append(RegexInstruction(operation: .scalar, a: single))
                } else {
                    append(RegexInstruction(operation: .set, a: index(of: set)))
                }
            case .assertion(let assertion):
                append(RegexInstruction(operation: .assertion, a: UInt32(assertion.rawValue)))
            case .concatenation(let nodes):
                for node in nodes where !emit(node) { return false }
            case .alternation(let nodes):
                var jumps: [Int] = []
                for (position, node) in nodes.enumerated() {
                    if position < nodes.count - 1 {
                        let split = append(RegexInstruction(operation: .split, a: next + 1))
                        guard emit(node) else { return false }
                        jumps.append(append(RegexInstruction(operation: .jump)))
                        instructions[split].b = next
                    } else if !emit(node) {
                        return false
                    }
                }
                for jump in jumps { instructions[jump].a = next }
            case .repetition(let inner, let low, let high):
                for _ in 0..<low where !emit(inner) { return false }
                if let high {
                    var splits: [Int] = []
                    for _ in low..<high {
                        splits.append(append(RegexInstruction(operation: .split, a: next + 1)))
                        guard emit(inner) else { return false }
                    }
                    for split in splits { instructions[split].b = next }
                } else {
                    let loop = append(RegexInstruction(operation: .split, a: next + 1))
                    guard emit(inner) else { return false }
                    append(RegexInstruction(operation: .jump, a: UInt32(loop)))
                    instructions[loop].b = next
                }
            }
            return instructions.count <= RegexProgram.instructionLimit
        }

        mutating func index(of set: ScalarSet) -> UInt32 {
            if let existing = setIndex[set.ranges] { return existing }
            let index = UInt32(sets.count)
            sets.append(set)
            setIndex[set.ranges] = index
            return index
        }
    }
}
