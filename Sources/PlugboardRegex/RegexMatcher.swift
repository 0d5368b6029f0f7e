/// The Pike VM: runs a `RegexProgram` over the Unicode scalars of a text, all NFA threads in lock step.
///
/// Each position of the text is visited once and each instruction at most once per position, so a match costs
/// O(text length × program size) whatever the pattern: `(a+)+$` or `(.*a){20}` cannot backtrack. Only whether there
/// is a match is computed (Unleash's `is_match`), so threads carry no captures and no priorities, and the search
/// stops at the first thread that reaches `match`.
///
/// The thread lists, the visited marks and the closure stack live in one temporary allocation per match (on the
/// stack when small enough), so matching does not touch the heap in the common case, and a program can be used by
/// any number of threads at once.
extension RegexProgram {
    /// The result of a match and the work it took: instructions visited (closure steps plus thread steps).
    /// Never more than `2 × (scalars + 1) × instructions.count`.
    struct Run {
        var matched: Bool
        var steps: Int
    }

    /// Marks "no scalar": before the start and after the end of the text.
    static let noScalar: UInt32 = 0xFFFF_FFFF
    private static var none: UInt32 { noScalar }

    /// `\w` with Unicode, for word boundaries.
    private static let unicodeWord = ScalarMatcher(UnicodeTables.perlWord)
    private static let asciiWord = ScalarMatcher(UnicodeTables.asciiWord)

    /// Whether the pattern matches anywhere in `text` (with the automaton when the program has one).
    func matches(_ text: String) -> Bool { dfa?.automaton.matches(text) ?? run(text).matched }

    /// Runs the program over `text`, counting its steps.
    func run(_ text: String) -> Run {
        let size = instructions.count
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: size * 4) { buffer in
            buffer.initialize(repeating: 0)
            return instructions.withUnsafeBufferPointer { program in
                run(text, program: program, buffer: buffer)
            }
        }
    }

    private func run(
        _ text: String, program: UnsafeBufferPointer<RegexInstruction>, buffer: UnsafeMutableBufferPointer<UInt32>
    ) -> Run {
        let size = program.count
        // The buffer holds, in order: visited marks, the current list, the next list, the closure stack.
        let marks = UnsafeMutableBufferPointer(rebasing: buffer[0..<size])
        var current = UnsafeMutableBufferPointer(rebasing: buffer[size..<(2 * size)])
        var following = UnsafeMutableBufferPointer(rebasing: buffer[(2 * size)..<(3 * size)])
        let stack = UnsafeMutableBufferPointer(rebasing: buffer[(3 * size)..<(4 * size)])
        var steps = 0
        var generation: UInt32 = 1
        var currentCount = 0
        var followingCount = 0

        /// Follows the empty transitions from `start` at the position between `before` and `after`, adding the
        /// consuming instructions reached to `list`; true when `match` is reached.
        func addThread(
            _ start: UInt32, to list: UnsafeMutableBufferPointer<UInt32>, count: inout Int, before: UInt32, after: UInt32
        ) -> Bool {
            var depth = 0
            @inline(__always) func push(_ pc: UInt32) {
                if marks[Int(pc)] != generation {
                    marks[Int(pc)] = generation
                    stack[depth] = pc
                    depth += 1
                }
            }
            push(start)
            while depth > 0 {
                depth -= 1
                let pc = stack[depth]
                let instruction = program[Int(pc)]
                steps += 1
                switch instruction.operation {
                case .match: return true
                case .jump: push(instruction.a)
                case .split:
                    push(instruction.a)
                    push(instruction.b)
                case .assertion:
                    if Self.holds(instruction.a, before: before, after: after) { push(pc + 1) }
                case .scalar, .set:
                    list[count] = pc
                    count += 1
                }
            }
            return false
        }

        var scalars = text.unicodeScalars.makeIterator()
        var before = Self.none
        var scalar = scalars.next()?.value ?? Self.none
        var atStart = true
        while true {
            if atStart || !anchoredAtStart {
                if addThread(0, to: current, count: &currentCount, before: before, after: scalar) {
                    return Run(matched: true, steps: steps)
                }
            }
            if scalar == Self.none || (currentCount == 0 && anchoredAtStart) { return Run(matched: false, steps: steps) }
            generation += 1
            followingCount = 0
            let after = scalars.next()?.value ?? Self.none
            for index in 0..<currentCount {
                let pc = current[index]
                let instruction = program[Int(pc)]
                steps += 1
                let accepted =
                    instruction.operation == .scalar ? instruction.a == scalar : sets[Int(instruction.a)].contains(scalar)
                if accepted, addThread(pc + 1, to: following, count: &followingCount, before: scalar, after: after) {
                    return Run(matched: true, steps: steps)
                }
            }
            swap(&current, &following)
            currentCount = followingCount
            before = scalar
            scalar = after
            atStart = false
        }
    }

    @inline(__always)
    private static func isWord(_ value: UInt32, unicode: Bool) -> Bool {
        value != none && (unicode ? unicodeWord.contains(value) : asciiWord.contains(value))
    }

    /// Whether an assertion holds between the scalars `before` and `after` (`none` at the ends of the text).
    static func holds(_ raw: UInt32, before: UInt32, after: UInt32) -> Bool {
        guard let assertion = RegexAssertion(rawValue: UInt8(truncatingIfNeeded: raw)) else { return false }
        switch assertion {
        case .startText: return before == none
        case .endText: return after == none
        case .startLine: return before == none || before == 0x0A
        case .endLine: return after == none || after == 0x0A
        case .startLineCRLF: return before == none || before == 0x0A || (before == 0x0D && after != 0x0A)
        case .endLineCRLF: return after == none || after == 0x0D || (after == 0x0A && before != 0x0D)
        case .wordBoundary: return isWord(before, unicode: true) != isWord(after, unicode: true)
        case .notWordBoundary: return isWord(before, unicode: true) == isWord(after, unicode: true)
        case .wordStart: return !isWord(before, unicode: true) && isWord(after, unicode: true)
        case .wordEnd: return isWord(before, unicode: true) && !isWord(after, unicode: true)
        case .wordStartHalf: return !isWord(before, unicode: true)
        case .wordEndHalf: return !isWord(after, unicode: true)
        case .asciiWordBoundary: return isWord(before, unicode: false) != isWord(after, unicode: false)
        case .asciiNotWordBoundary: return isWord(before, unicode: false) == isWord(after, unicode: false)
        case .asciiWordStart: return !isWord(before, unicode: false) && isWord(after, unicode: false)
        case .asciiWordEnd: return isWord(before, unicode: false) && !isWord(after, unicode: false)
        case .asciiWordStartHalf: return !isWord(before, unicode: false)
        case .asciiWordEndHalf: return !isWord(after, unicode: false)
        }
    }
}
