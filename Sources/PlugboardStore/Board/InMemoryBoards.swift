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
/// and the initialisation's audit rows at the template's time. A copy is made only for a clock that reads that time
/// or later, so that no board's log goes back in time; a clock set before it gets a board migrated from nothing.
enum InMemoryBoards {
    /// A template: the board migrated from nothing, and the time its clock read just before.
    private struct Template: Sendable {
        let queue: DatabaseQueue
        let madeAt: Date
    }

    private static let templates = Mutex<[Principal: Template]>([:])

    static func board(by actor: Principal, clock: TimeSource) throws(BoardError) -> Board {
        let now = clock.date()
        if let template = templates.withLock({ $0[actor] }), now >= template.madeAt {
            let queue = try newQueue()
            do { try template.queue.backup(to: queue) } catch {
                throw BoardError(.io, "cannot copy a board in memory: \(Board.describe(error))")
            }
            return Board(writer: queue, clock: clock)
        }
        let queue = try newQueue()
        let board = Board(writer: queue, clock: clock)
        _ = try board.migrate(by: actor, initializing: true)
        // The template is a copy, so that the board answered is the caller's alone.
        let template = try newQueue()
        do { try queue.backup(to: template) } catch {
            throw BoardError(.io, "cannot copy a board in memory: \(Board.describe(error))")
        }
        templates.withLock { templates in
            if templates[actor] == nil { templates[actor] = Template(queue: template, madeAt: now) }
        }
        return board
    }

    private static func newQueue() throws(BoardError) -> DatabaseQueue {
        do { return try DatabaseQueue(configuration: Board.configuration(readOnly: false)) } catch {
            throw BoardError(.io, "cannot create a board in memory: \(Board.describe(error))")
        }
    }
}
