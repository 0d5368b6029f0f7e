/// A deterministic automaton built from a small `RegexProgram` when it is compiled: one table lookup per scalar of
/// the text instead of the Pike VM's thread lists.
///
/// A state is what the Pike VM would hold between two scalars: the instructions its threads continue at (before
/// their empty transitions are followed) and what the last scalar was, as far as the program's assertions can tell
/// (the start of the text, a `\n`, a `\r`, a word character). A transition follows the empty transitions with the
/// next scalar known, reports a match at once (only whether there is one counts, as in Unleash), and steps the
/// threads over the scalar. Scalars are grouped into classes that no instruction or assertion tells apart, so the
/// table has one column per class.
///
/// Everything is computed ahead, so matching is read-only and any number of threads can share the automaton. A
/// program whose automaton would have more than `stateLimit` states keeps the Pike VM, which is linear too; the
/// differential tests run both against Unleash's engine.
final class RegexDFA: Sendable {
    static let stateLimit = 512
    /// The most table entries (states × classes) and program instructions the automaton is built for, which
    /// bounds the work of building it (it is built on every compile of a flag set).
    static let tableLimit = 1 << 16
    static let instructionLimit = 400
    /// Transition targets besides states.
    static let matched: Int32 = -1
    static let dead: Int32 = -2
    /// In the table by byte, for the lead byte of a scalar above ASCII: decode the scalar and read the table by class.
    static let wide: Int32 = -3

    /// The tables, which this object owns and frees.
    let automaton: RegexAutomaton

    deinit { automaton.free() }

    /// Builds the automaton, or `nil` when it would be over `stateLimit` states.
    init?(program: RegexProgram, sets: [ScalarSet]) {
        let instructions = program.instructions
        guard instructions.count <= Self.instructionLimit else { return nil }
        // What the assertions can tell about a scalar.
        var usesLines = false
        var usesUnicodeWords = false
        var usesASCIIWords = false
        for instruction in instructions where instruction.operation == .assertion {
            switch RegexAssertion(rawValue: UInt8(truncatingIfNeeded: instruction.a)) {
            case .startLine, .endLine, .startLineCRLF, .endLineCRLF: usesLines = true
            case .wordBoundary, .notWordBoundary, .wordStart, .wordEnd, .wordStartHalf, .wordEndHalf: usesUnicodeWords = true
            case .asciiWordBoundary, .asciiNotWordBoundary, .asciiWordStart, .asciiWordEnd, .asciiWordStartHalf,
                .asciiWordEndHalf:
                usesASCIIWords = true
            case .startText, .endText, nil: break
            }
        }
        func look(_ value: UInt32) -> UInt8 {
            var bits: UInt8 = 0
            if usesLines, value == 0x0A { bits |= 1 }
            if usesLines, value == 0x0D { bits |= 2 }
            if usesUnicodeWords, UnicodeTables.perlWord.contains(value) { bits |= 4 }
            if usesASCIIWords, UnicodeTables.asciiWord.contains(value) { bits |= 8 }
            return bits
        }

        // Classes: cut the scalar range wherever an instruction or an assertion could change its answer.
        var cuts: Set<UInt32> = [0, 128, 0x11_0000]
        func cut(_ set: ScalarSet) {
            for range in set.ranges {
                cuts.insert(range.lowerBound)
                cuts.insert(range.upperBound + 1)
            }
        }
        let consuming = instructions.indices.filter { instructions[$0].operation == .scalar || instructions[$0].operation == .set }
        for pc in consuming {
            let instruction = instructions[pc]
            if instruction.operation == .scalar {
                cuts.insert(instruction.a)
                cuts.insert(instruction.a + 1)
            } else {
                cut(sets[Int(instruction.a)])
            }
        }
        if usesLines { cuts.formUnion([0x0A, 0x0B, 0x0D, 0x0E]) }
        if usesUnicodeWords { cut(UnicodeTables.perlWord) }
        if usesASCIIWords { cut(UnicodeTables.asciiWord) }
        for value in 0..<128 { cuts.insert(UInt32(value)) }
        let bounds = cuts.filter { $0 <= 0x11_0000 }.sorted()

        func accepts(_ pc: Int, _ value: UInt32) -> Bool {
            let instruction = instructions[pc]
            return instruction.operation == .scalar ? instruction.a == value : sets[Int(instruction.a)].contains(value)
        }
        struct Signature: Hashable {
            var accepted: [Bool]
            var look: UInt8
        }
        var classBySignature: [Signature: UInt16] = [:]
        var representatives: [UInt32] = []
        var asciiClasses = [UInt16](repeating: 0, count: 128)
        var runStarts: [UInt32] = []
        var runClasses: [UInt16] = []
        for start in bounds.dropLast() {
            let signature = Signature(accepted: consuming.map { accepts($0, start) }, look: look(start))
            let classIndex: UInt16
            if let existing = classBySignature[signature] {
                classIndex = existing
            } else {
                guard representatives.count < Int(UInt16.max) else { return nil }
                classIndex = UInt16(representatives.count)
                classBySignature[signature] = classIndex
                representatives.append(start)
            }
            if start < 128 {
                asciiClasses[Int(start)] = classIndex
            } else if runClasses.last != classIndex {
                runStarts.append(start)
                runClasses.append(classIndex)
            }
        }
        let classCount = representatives.count
        guard classCount <= Self.tableLimit / 4 else { return nil }

        // States: (continuation instructions, the last scalar's look), explored breadth first from the start.
        struct State: Hashable {
            var seeds: [UInt32]
            /// A scalar that looks like the last one to every assertion, or `none` at the start of the text.
            var before: UInt32
        }
        let none = RegexProgram.noScalar
        var lookRepresentative: [UInt8: UInt32] = [:]
        for value in representatives where lookRepresentative[look(value)] == nil { lookRepresentative[look(value)] = value }

        var marks = [Bool](repeating: false, count: instructions.count)
        /// Follows the empty transitions from `seeds` between `before` and `after`: the consuming instructions
        /// reached, or `nil` when `match` is reached.
        func closure(_ seeds: [UInt32], before: UInt32, after: UInt32) -> [UInt32]? {
            for index in marks.indices { marks[index] = false }
            var stack = seeds.reversed().map { $0 }
            var reached: [UInt32] = []
            while let pc = stack.popLast() {
                guard !marks[Int(pc)] else { continue }
                marks[Int(pc)] = true
                let instruction = instructions[Int(pc)]
                switch instruction.operation {
                case .match: return nil
                case .jump: stack.append(instruction.a)
                case .split:
                    stack.append(instruction.b)
                    stack.append(instruction.a)
                case .assertion:
                    if RegexProgram.holds(instruction.a, before: before, after: after) { stack.append(pc + 1) }
                case .scalar, .set: reached.append(pc)
                }
            }
            return reached
        }

        let anchored = program.anchoredAtStart
        var states: [State] = [State(seeds: [0], before: none)]
        var index: [State: Int32] = [states[0]: 0]
        var transitions: [Int32] = []
        var acceptsAtEnd: [Bool] = []
        var current = 0
        while current < states.count {
            let state = states[current]
            current += 1
            acceptsAtEnd.append(closure(state.seeds, before: state.before, after: none) == nil)
            for classIndex in 0..<classCount {
                let scalar = representatives[classIndex]
                guard let threads = closure(state.seeds, before: state.before, after: scalar) else {
                    transitions.append(Self.matched)
                    continue
                }
                var next = Set<UInt32>()
                for pc in threads where accepts(Int(pc), scalar) { next.insert(pc + 1) }
                if !anchored { next.insert(0) }
                if next.isEmpty {
                    transitions.append(Self.dead)
                    continue
                }
                let target = State(seeds: next.sorted(), before: lookRepresentative[look(scalar)] ?? scalar)
                if let existing = index[target] {
                    transitions.append(existing)
                } else {
                    guard states.count < Self.stateLimit, (states.count + 1) * classCount <= Self.tableLimit else { return nil }
                    index[target] = Int32(states.count)
                    transitions.append(Int32(states.count))
                    states.append(target)
                }
            }
        }
        // Targets as `state << 10`, the byte offset of their rows in the table by byte, which saves a lookup of the
        // byte's class and a multiplication per ASCII scalar; the table by class is read at `(target >> 10) × classCount`.
        // Bytes from 0x80 on are `wide` in every row, so that one load and one sign test per byte cover ASCII.
        let encoded = transitions.map { $0 < 0 ? $0 : $0 << 10 }
        var asciiTransitions = [Int32](repeating: Self.wide, count: states.count << 8)
        for state in 0..<states.count {
            for byte in 0..<128 { asciiTransitions[state << 8 | byte] = encoded[state * classCount + Int(asciiClasses[byte])] }
        }
        automaton = RegexAutomaton(
            transitions: encoded, asciiTransitions: asciiTransitions, classCount: classCount, acceptsAtEnd: acceptsAtEnd,
            runStarts: runStarts, runClasses: runClasses)
    }
}

/// A `RegexDFA`'s tables, read through pointers, so that copying it (into a flag program's records, for instance)
/// copies no references; valid while its `RegexDFA` lives.
///
/// Get one from ``UnleashRegex/automaton`` and keep the ``UnleashRegex`` alive as long as the automaton is used:
/// the tables are freed with the regex.
public struct RegexAutomaton: @unchecked Sendable {
    /// `classCount` entries per state, read for scalars above ASCII; a target is `state << 10`, or negative.
    private let transitions: UnsafeMutablePointer<Int32>
    /// 256 entries per state, one per byte: for an ASCII byte the target of `transitions` for its class, for any
    /// other `RegexDFA.wide`.
    private let asciiTransitions: UnsafeMutablePointer<Int32>
    private let classCount: Int
    /// Whether the text may end in the state with a match.
    private let acceptsAtEnd: UnsafeMutablePointer<Bool>
    /// Above ASCII: the first scalar of each run of scalars with one class, sorted, and the runs' classes.
    private let runStarts: UnsafeMutablePointer<UInt32>
    private let runClasses: UnsafeMutablePointer<UInt16>
    private let runCount: Int

    fileprivate init(
        transitions: [Int32], asciiTransitions: [Int32], classCount: Int, acceptsAtEnd: [Bool], runStarts: [UInt32],
        runClasses: [UInt16]
    ) {
        func copy<T>(_ array: [T]) -> UnsafeMutablePointer<T> {
            let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(1, array.count))
            _ = UnsafeMutableBufferPointer(start: pointer, count: array.count).initialize(from: array)
            return pointer
        }
        self.transitions = copy(transitions)
        self.classCount = classCount
        self.acceptsAtEnd = copy(acceptsAtEnd)
        self.asciiTransitions = copy(asciiTransitions)
        self.runStarts = copy(runStarts)
        self.runClasses = copy(runClasses)
        runCount = runStarts.count
    }

    fileprivate func free() {
        transitions.deallocate()
        acceptsAtEnd.deallocate()
        asciiTransitions.deallocate()
        runStarts.deallocate()
        runClasses.deallocate()
    }

    /// Whether the pattern matches anywhere in `text`.
    public func matches(_ text: String) -> Bool {
        if let answer = text.utf8.withContiguousStorageIfAvailable({ matches(utf8: $0) }) { return answer }
        var copy = text
        copy.makeContiguousUTF8()
        return matches(copy)
    }

    /// Whether the pattern matches anywhere in the UTF-8 text `bytes`, which must be valid UTF-8 (a Swift
    /// string's bytes are), decoding scalars in place.
    public func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // `row` is the state << 10, the byte offset of its row in `table`; `cursor` walks the bytes to `end`.
        let table = UnsafeRawPointer(asciiTransitions)
        var row = 0
        guard var cursor = bytes.baseAddress else { return acceptsAtEnd[0] }
        let end = cursor + bytes.count
        while cursor < end {
            let next = Int(table.load(fromByteOffset: row &+ Int(cursor.pointee) &<< 2, as: Int32.self))
            if next >= 0 {
                row = next
                cursor += 1
                continue
            }
            guard next == Int(RegexDFA.wide) else { return next == Int(RegexDFA.matched) }
            let lead = cursor.pointee
            var value: UInt32
            if lead < 0xE0 {
                value = UInt32(lead & 0x1F) << 6 | UInt32(cursor[1] & 0x3F)
                cursor += 2
            } else if lead < 0xF0 {
                value = UInt32(lead & 0x0F) << 12 | UInt32(cursor[1] & 0x3F) << 6 | UInt32(cursor[2] & 0x3F)
                cursor += 3
            } else {
                value = UInt32(lead & 0x07) << 18 | UInt32(cursor[1] & 0x3F) << 12
                value |= UInt32(cursor[2] & 0x3F) << 6 | UInt32(cursor[3] & 0x3F)
                cursor += 4
            }
            let wideNext = transitions[(row &>> 10) &* classCount &+ Int(classOfWide(value))]
            if wideNext < 0 { return wideNext == RegexDFA.matched }
            row = Int(truncatingIfNeeded: wideNext)
        }
        return acceptsAtEnd[row &>> 10]
    }

    private func classOfWide(_ value: UInt32) -> UInt16 {
        // The last run that starts at or before `value` (the first run starts at 128).
        var low = 0
        var high = runCount
        while high - low > 1 {
            let middle = (low + high) / 2
            if runStarts[middle] <= value { low = middle } else { high = middle }
        }
        return runClasses[low]
    }
}
