package import PlugboardModel

extension Board {
    /// Opens the file at `path` as a board and verifies its audit chain and state root, as a backup is verified before it
    /// is reported or restored; returns its head. `what` names the file in the sentence of a refusal. The `-wal` and
    /// `-shm` that opening it leaves beside it are removed.
    package static func verifyCopy(at path: String, describing what: String) throws(BoardError) -> AuditCheckpoint {
        try BoardFiles.verify(path, describing: what)
    }

    /// Removes a copy of a board that was not kept, with the `-wal` and `-shm` SQLite may have left beside it.
    package static func removeCopy(_ path: String) {
        BoardFiles.removeWithSidecars(path)
    }
}
