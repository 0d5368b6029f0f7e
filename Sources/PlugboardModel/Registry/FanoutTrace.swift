import Foundation

/// Timestamps of a change on its way from the board to remote hosts, for measuring where the time goes: off unless
/// `$PLUGBOARD_TRACE_FANOUT` is set (the fleet drill sets it with `--trace`), then one line per stage on standard
/// error, `fanout-trace <stage> <milliseconds since 1970, with a fraction> <detail>`.
///
/// `plugboard serve` writes `noticed` (its board check saw the change), `signed` (the pushed snapshot is built and
/// signed) and `written` (the event is handed to every stream); a remote host writes `event` (the event is parsed),
/// `fetched` (a snapshot read over HTTP arrived) and `verified` (the snapshot it acts on is verified).
package enum FanoutTrace {
    /// Whether stages are written.
    package static let enabled = ProcessInfo.processInfo.environment["PLUGBOARD_TRACE_FANOUT"] != nil

    /// Writes one stage when tracing is on.
    package static func note(_ stage: @autoclosure () -> String, _ detail: @autoclosure () -> String = "") {
        guard enabled else { return }
        let now = Date().timeIntervalSince1970 * 1000
        FileHandle.standardError.write(Data("fanout-trace \(stage()) \(String(format: "%.3f", now)) \(detail())\n".utf8))
    }
}
