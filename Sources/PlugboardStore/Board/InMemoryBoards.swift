import Foundation
import GRDB
import PlugboardModel
import Synchronization

/// The boards in memory that tests make (``Board/inMemory(by:clock:)``): the first one an actor makes in a process is
/// migrated from nothing, and kept as that actor's template; every later one is a copy of it (SQLite's backup, a few
/// pages), which reads the time from its own clock from then on.
///
/// Migrating a board from nothing applies every migration in its own audited change, which took most of the processor
/// time of the store's tests in a debug build. A copy is that board exactly: the same board id, and the migrations'
/// and the initialisation's audit rows at the template's time. A copy is made only for a clock that reads the template's last
/// time or later, so that no board's log goes back in time; a clock set before it gets a board migrated from nothing.
enum InMemoryBoards {
    /// A template: the board migrated from nothing, and the time its clock read once the migrations were done (no
    /// earlier than any time in its audit log).
    private struct Template: Sendable {
        let queue: DatabaseQueue
        let madeAt: Date
    }

    private static let templates = Mutex<[Principal: Template]>([:])

    static func board(by actor: Principal, clock: TimeSource) throws(BoardError) -> Board {
        if let template = templates.withLock({ $0[actor] }), clock.date() >= template.madeAt {
            return Board(writer: try copy(of: template.queue), clock: clock)
        }
        let queue = try newQueue()
        let board = Board(writer: queue, clock: clock)
        _ = try board.migrate(by: actor, initializing: true)
        // The template is a copy, so that the board answered is the caller's alone.
        let template = Template(queue: try copy(of: queue), madeAt: clock.date())
        templates.withLock { templates in
            if templates[actor] == nil { templates[actor] = template }
        }
        return board
    }

    /// A new board in memory holding what `queue` holds (SQLite's backup).
    private static func copy(of queue: DatabaseQueue) throws(BoardError) -> DatabaseQueue {
        let copy = try newQueue()
        do { try queue.backup(to: copy) } catch {
            throw BoardError(.io, "cannot copy a board in memory: \(Board.describe(error))")
        }
        return copy
    }

    private static func newQueue() throws(BoardError) -> DatabaseQueue {
        do { return try DatabaseQueue(configuration: Board.configuration(readOnly: false)) } catch {
            throw BoardError(.io, "cannot create a board in memory: \(Board.describe(error))")
        }
    }
}
