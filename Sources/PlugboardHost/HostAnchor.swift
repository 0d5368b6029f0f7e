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
enum HostAnchor {
    /// The file's name in the state folder.
    static let fileName = "anchor"

    /// The anchor kept in `folder`; nil when there is none. A file that is not an anchor is an error: a host must not
    /// forget its anchor silently.
    static func read(_ folder: String) throws(BoardError) -> AuditCheckpoint? {
        let path = (folder as NSString).appendingPathComponent(fileName)
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
