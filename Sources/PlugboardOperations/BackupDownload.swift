import Foundation
package import PlugboardModel
package import PlugboardStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `plugboard backup` through the operations API: the server takes a verified backup (as `plugboard backup` does on the
/// board's machine) into a private file beside the board, sends it with its description and its SHA-256, and removes
/// it; the CLI writes it to a private temporary file, checks the digest and renames it into place. Board admins only:
/// a backup holds the whole board (sealed secrets and the hashes of tokens included).
package enum BackupDownload {
    /// The header that carries ``Description`` (JSON, as ``OperationsWire/headerValue(_:)`` writes it).
    package static let header = "Plugboard-Backup"

    /// What the server says of the backup it sends.
    package struct Description: Codable, Sendable {
        /// The board that was backed up, on the server's machine.
        package var board: String
        package var seq: Int64
        package var hash: String
        package var stateRoot: String?
        package var size: Int64
        package var time: String
        /// The SHA-256 of the file sent.
        package var sha256: String
        /// What lives beside the board on the server's machine and is not in the backup.
        package var notInBackup: [BoardCompanions.Companion]

        /// This description as the CLI reports it once the file verified here to `head`: the head and state root as
        /// verified, and the server's words (paths, times) escaped, since they reach a terminal.
        package func verified(_ head: AuditCheckpoint) -> Description {
            var copy = self
            copy.board = Validate.escaped(board)
            copy.seq = head.seq
            copy.hash = head.hash
            copy.stateRoot = head.stateRoot
            copy.time = Validate.escaped(time)
            copy.notInBackup = notInBackup.map {
                BoardCompanions.Companion(what: Validate.escaped($0.what), path: Validate.escaped($0.path))
            }
            return copy
        }
    }

    /// Takes a verified backup of `board` for `actor` (a board admin) into a private file beside it; returns the file and
    /// its description. The caller removes the file once it is sent.
    package static func take(_ board: Board, for actor: Principal) throws(BoardError) -> (path: String, description: Description) {
        try board.requireAdmin(
            actor, doing: "download a backup of the board", refusal: AuditEntry(action: .boardBackup, targetType: "board"))
        let folder = ArtifactUploads.folder(board)
        if mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw BoardError(.io, "cannot create \(folder): \(String(cString: strerror(errno)))")
        }
        ArtifactUploads.removeStale(folder)
        let path = folder + "/.backup-\(UUID().uuidString)"
        let backup = try board.backup(to: path)
        guard let digest = FileDigest.sha256(ofFile: path) else {
            unlink(path)
            throw BoardError(.io, "cannot read the backup \(path)")
        }
        return (
            path,
            Description(
                board: board.path, seq: backup.seq, hash: backup.hash, stateRoot: backup.stateRoot, size: backup.size, time: backup.time,
                sha256: digest, notInBackup: BoardCompanions(board: board.path).present)
        )
    }
}
