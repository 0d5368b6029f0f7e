import Foundation
import HTTPTypes
import PlugboardOperations
import Synchronization

#if canImport(Glibc)
// Once a dependency loads CoreFoundation, stat() and its fields resolve to its declaration, which must be imported.
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Artifacts uploaded through the operations API and waiting for the `plugin register` that names them (``ArtifactUploads``),
/// with their quotas: per principal and for the whole server, in count and in bytes (uploads in progress count with
/// their declared length), and a share of the file system always left free. An upload past any of them is refused
/// before its body is read: `429` for a principal's own quota, `507` for the server's and for free space.
///
/// The server's totals are read from the upload folder, so uploads staged before a restart count; a principal's are
/// kept in memory, and an upload leaves them once it is registered or removed (an hour after it was made).
final class StagedUploads: Sendable {
    typealias Limits = ServerConfiguration.UploadQuota

    /// Why an upload is refused: its status and sentence.
    struct Refusal: Error {
        let status: HTTPResponse.Status
        let sentence: String
    }

    /// An admitted upload's place in the quotas.
    struct Reservation: Sendable {
        let uploads: StagedUploads
        let id: UUID
        /// The upload was kept at `path` with `bytes`: it counts for its principal until it is registered or removed.
        func staged(at path: String, bytes: Int) { uploads.end(id, keptAt: path, bytes: bytes) }
        /// The upload was not kept.
        func cancel() { uploads.end(id, keptAt: nil, bytes: 0) }
    }

    private struct Entry {
        var principal: String
        var bytes: Int
        /// Nil while the upload is in progress.
        var path: String?
        var since: Date
    }

    /// `507 Insufficient Storage`.
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")

    let limits: Limits
    /// Bytes free for this user on the file system of a path.
    let freeSpace: @Sendable (String) -> Int?
    private let entries = Mutex<[UUID: Entry]>([:])

    init(limits: Limits, freeSpace: @escaping @Sendable (String) -> Int? = StagedUploads.available) {
        self.limits = limits
        self.freeSpace = freeSpace
    }

    /// Admits an upload of `bytes` (its declared length, or the largest allowed) by `principal` into `folder`, or says
    /// why not. A principal who holds no role on the board (`holdsRole` false) may have ``Limits/perPrincipalCountWithoutRole``
    /// uploads waiting, one who does ``Limits/perPrincipalCount``; both within ``Limits/perPrincipalBytes``.
    func admit(principal: String, holdsRole: Bool, bytes: Int, folder: String) -> Result<Reservation, Refusal> {
        let (onDisk, onDiskBytes) = Self.staged(in: folder)
        let free = freeSpace(FileManager.default.fileExists(atPath: folder) ? folder : (folder as NSString).deletingLastPathComponent)
        return entries.withLock { entries in
            let now = Date()
            entries = entries.filter { _, entry in
                guard let path = entry.path else { return true }
                return now.timeIntervalSince(entry.since) < ArtifactUploads.lifetime && FileManager.default.fileExists(atPath: path)
            }
            let mine = entries.values.filter { $0.principal == principal }
            let inProgress = entries.values.filter { $0.path == nil }
            let inProgressBytes = inProgress.reduce(0) { $0 + $1.bytes }
            let most = holdsRole ? limits.perPrincipalCount : limits.perPrincipalCountWithoutRole
            if mine.count + 1 > most {
                let whose = holdsRole ? "" : " for a principal who holds no role on the board"
                return .failure(
                    Refusal(
                        status: .tooManyRequests,
                        sentence:
                            "\(principal) has \(mine.count) uploads waiting for their registration, at most \(most)\(whose); register them, or wait for them to be removed an hour after their upload"
                    ))
            }
            let mineBytes = mine.reduce(0) { $0 + $1.bytes }
            if mineBytes + bytes > limits.perPrincipalBytes {
                return .failure(
                    Refusal(
                        status: .tooManyRequests,
                        sentence:
                            "\(principal)'s uploads waiting for their registration would hold \(Self.mib(mineBytes + bytes)) MiB, at most \(Self.mib(limits.perPrincipalBytes)) MiB; register them first, or wait for them to be removed an hour after their upload"
                    ))
            }
            if onDisk + inProgress.count + 1 > limits.totalCount || onDiskBytes + inProgressBytes + bytes > limits.totalBytes {
                return .failure(
                    Refusal(
                        status: Self.insufficientStorage,
                        sentence:
                            "the server holds as many uploads waiting for their registration as it takes (\(limits.totalCount), \(Self.mib(limits.totalBytes)) MiB); try again once some are registered or removed, an hour after their upload"
                    ))
            }
            if let free, free - inProgressBytes - bytes < limits.reserve {
                return .failure(
                    Refusal(
                        status: Self.insufficientStorage,
                        sentence:
                            "the board's file system has \(Self.mib(max(0, free - inProgressBytes))) MiB free, and an upload of up to \(Self.mib(bytes)) MiB would leave less than the \(Self.mib(limits.reserve)) MiB kept free; nothing was kept"
                    ))
            }
            let id = UUID()
            entries[id] = Entry(principal: principal, bytes: bytes, path: nil, since: now)
            return .success(Reservation(uploads: self, id: id))
        }
    }

    /// Ends an upload in progress: kept at `path` with `bytes` (it counts for its principal from now on), or dropped.
    private func end(_ id: UUID, keptAt path: String?, bytes: Int) {
        entries.withLock { entries in
            guard let path, var entry = entries[id] else {
                entries[id] = nil
                return
            }
            entry.path = path
            entry.bytes = bytes
            entry.since = Date()
            entries[id] = entry
        }
    }

    /// The count and bytes of the uploads kept in `folder` (temporary files of uploads in progress apart).
    static func staged(in folder: String) -> (count: Int, bytes: Int) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return (0, 0) }
        var count = 0
        var bytes = 0
        for name in names where !name.hasPrefix(".") {
            var info = stat()
            guard lstat(folder + "/" + name, &info) == 0 else { continue }
            count += 1
            bytes += Int(info.st_size)
        }
        return (count, bytes)
    }

    /// Bytes available to this user on the file system of `path`.
    @Sendable static func available(_ path: String) -> Int? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Bytes in MiB, rounded up.
    static func mib(_ bytes: Int) -> Int { (bytes + (1 << 20) - 1) >> 20 }
}
