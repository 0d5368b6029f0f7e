import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the processor time of the tests' child processes goes, to find the tests that cost a run the most.
///
/// With `PLUGBOARD_TEST_CPU_LOG` set to a file, every child that ``Spawned`` starts adds one line to it when it is
/// reaped: its CPU seconds (user and system), its wall seconds, the test that started it and the start of its command
/// line, separated by tabs. `Tools/Scripts/test-cpu FILE` sums the lines by command and by test. Without the variable,
/// nothing is written.
enum ChildCPULog {
    /// The file lines are added to; nil when the variable is not set.
    static let path: String? = ProcessInfo.processInfo.environment["PLUGBOARD_TEST_CPU_LOG"].flatMap { $0.isEmpty ? nil : $0 }

    /// What a line says of a child besides its usage, noted when it starts.
    struct Start: Sendable {
        let test: String
        let command: String
        let at: ContinuousClock.Instant
    }

    /// The start of `command`, run by the current test; nil when no log is kept.
    static func start(_ command: [String]) -> Start? {
        guard path != nil else { return nil }
        // The executable's name, and the next two words (a subcommand and its action, mostly).
        let words = command.prefix(1).map { ($0 as NSString).lastPathComponent } + command.dropFirst().prefix(2)
        return Start(test: Test.current?.id.description ?? "(no test)", command: words.joined(separator: " "), at: .now)
    }

    /// Adds the line of a child that started as `start` and was reaped with `usage`.
    static func record(_ start: Start, usage: rusage) {
        guard let path else { return }
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let wall = ContinuousClock.now - start.at
        let wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        let fields = [String(format: "%.3f", cpu), String(format: "%.3f", wallSeconds), start.test, start.command]
        let line =
            fields.map { $0.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ") }
            .joined(separator: "\t") + "\n"
        // One write of a line to a file opened for appending: lines of children reaped at once never interleave.
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = line.utf8CString.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count - 1) }
    }
}
