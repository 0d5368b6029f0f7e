import Foundation
import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The newest audit head a host accepted, kept in its state folder as the file `anchor`: one line
/// `SEQ:HASH:ROOT`, the form `plugboard audit checkpoint` prints (mode 0600 in a 0700 folder, replaced atomically).
///
/// A state folder or anchor that another user may write (group or others write bits), or that belongs to another user
/// than the host's or root, is refused as the master key file is: whoever can delete the anchor can make the host
/// trust an older board.
enum HostAnchor {
    /// The file's name in the state folder.
    static let fileName = "anchor"

    /// The anchor kept in `folder`; nil when there is none. A file that is not an anchor is an error: a host must not
    /// forget its anchor silently.
    static func read(_ folder: String) throws(BoardError) -> AuditCheckpoint? {
        let path = (folder as NSString).appendingPathComponent(fileName)
        for (item, what, mode) in [(folder, "state folder", "700"), (path, "anchor", "600")] {
            if let problem = notPrivate(item, what: what, mode: mode) { throw BoardError(.integrity, problem) }
        }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard data.count < 1024, let text = String(data: data, encoding: .utf8) else {
            throw BoardError(
                .integrity,
                "the host's anchor \(path) is not a checkpoint; remove it only if the host should trust the board as it finds it")
        }
        do {
            return try AuditCheckpoint(parsing: text.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw BoardError(.integrity, "the host's anchor \(path) is not a checkpoint (\(error.message))")
        }
    }

    /// Why `path` is not the host's own (nil when it is, or does not exist): it belongs to another user than the host's
    /// or root, or its group or others may write it; the sentence says how to fix it (`chmod MODE`).
    static func notPrivate(_ path: String, what: String, mode: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let owner = info.st_uid
        guard owner == geteuid() || owner == 0 else {
            return
                "the host's \(what) \(path) belongs to user id \(owner), not to the user that runs the host (\(geteuid())) or root; give the host one of its own (chown, then chmod \(mode) \(path))"
        }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o022 == 0 else {
            return
                "the host's \(what) \(path) is writable by its group or others (mode \(String(permissions, radix: 8))), so another user could delete or replace its anchor; run chmod \(mode) \(path)"
        }
        return nil
    }

    /// Keeps `anchor` in `folder` (made 0700 when missing): written to a temporary file, then renamed over the old one.
    static func write(_ anchor: AuditCheckpoint, to folder: String) throws(BoardError) {
        do {
            if !FileManager.default.fileExists(atPath: folder) {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            let path = (folder as NSString).appendingPathComponent(fileName)
            let temporary = path + ".\(getpid()).tmp"
            guard
                FileManager.default.createFile(
                    atPath: temporary, contents: Data((anchor.description + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else { throw BoardError(.io, "cannot write \(temporary)") }
            guard rename(temporary, path) == 0 else {
                unlink(temporary)
                throw BoardError(.io, "cannot replace \(path): \(String(cString: strerror(errno)))")
            }
        } catch let error as BoardError {
            throw error
        } catch {
            throw BoardError(.io, "cannot keep the host's anchor in \(folder): \(error.localizedDescription)")
        }
    }
}
