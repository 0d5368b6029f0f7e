import Foundation
import PlugboardModel
import PlugboardStore
import Synchronization

/// Reads the board's API tokens again when a request presents a token the server does not know, so that a token works
/// as soon as `plugboard token create` returns it rather than after the next board check.
///
/// Bounded: at most one read per ``minimumInterval`` whatever the number of requests with unknown tokens, so that a
/// flood of made-up tokens costs the board a few small reads a second, never one per request.
final class TokenReread: Sendable {
    /// The shortest time between two reads.
    static let minimumInterval = Duration.milliseconds(50)

    private let board: any ServedBoard
    private let tokens: TokenCheck
    private let lastRead = Mutex<ContinuousClock.Instant?>(nil)
    /// Where the interval between reads is measured.
    private let clock: TimeSource

    init(board: any ServedBoard, tokens: TokenCheck, clock: TimeSource = .system) {
        self.board = board
        self.tokens = tokens
        self.clock = clock
    }

    /// Reloads the tokens unless that was done less than ``minimumInterval`` ago (or a read runs now); true when it
    /// reloaded them, so that the caller checks the token once more.
    func rereadIfDue() -> Bool {
        let now = clock.instant()
        let due = lastRead.withLock { last in
            if let last, now - last < Self.minimumInterval { return false }
            last = now
            return true
        }
        guard due, let credentials = try? board.apiTokenCredentials() else { return false }
        tokens.reload(credentials)
        return true
    }
}
