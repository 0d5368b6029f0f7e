import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The content-addressed store of plug-in artifacts beside the board: `<board>.artifacts/sha256/<hex>`.
///
/// The folder is created with mode 0700 and files with 0600, so that other users can read neither.
/// Files are written to a temporary name (`tmp/<pid>-<uuid>`) while they are hashed and renamed into place only
/// when the registration that refers to them commits; what a killed registration left there is removed at the
/// next staging (``removeStaleStaging(now:)``).
public struct ArtifactStore: Sendable {
    /// The root folder, `<board>.artifacts`.
    public let root: String

    /// Creates a store rooted at `root` (nothing is created until an artifact is added).
    public init(root: String) { self.root = root }

    /// The path where the artifact with this SHA-256 is kept.
    public func path(forSHA256 sha256: String) -> String { root + "/sha256/" + sha256 }

    /// A file copied into the store under a temporary name, hashed, waiting for ``commit(_:)``.
    public struct Staged: Sendable {
        /// SHA-256 of the content, lower-case hex.
        public let sha256: String
        /// Size in bytes.
        public let size: Int64
        /// The name the source file had.
        public let fileName: String
        let temporaryPath: String
    }

    /// Copies `source` into the store under a temporary name, computing its SHA-256 as it goes.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` when the source does not exist, is not a regular file or
    ///   cannot be read; `.io` when the store cannot be written.
    public func stage(_ source: String) throws(BoardError) -> Staged {
        var info = stat()
        guard stat(source, &info) == 0 else {
            throw .invalid("the artifact \(source) does not exist; check the path given to --artifact")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .invalid("the artifact \(source) is not a regular file")
        }
        guard let input = FileHandle(forReadingAtPath: source) else {
            throw .invalid("the artifact \(source) cannot be read (permission denied)")
        }
        defer { try? input.close() }
        try ensureFolders()
        removeStaleStaging()
        let temporary = root + "/tmp/\(getpid())-\(UUID().uuidString.lowercased())"
        let fd = Glibc_open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BoardError(.io, "cannot write to the artifact store \(root): \(String(cString: strerror(errno)))") }
        let output = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
                hasher.update(data: chunk)
                try output.write(contentsOf: chunk)
                size += Int64(chunk.count)
            }
            try output.synchronize()
            try output.close()
        } catch {
            unlink(temporary)
            throw BoardError(.io, "cannot copy the artifact \(source) into \(root): \(Self.describe(error)); nothing was changed")
        }
        let sha = hasher.finalize().hex
        return Staged(sha256: sha, size: size, fileName: (source as NSString).lastPathComponent, temporaryPath: temporary)
    }

    /// The system's words for a failed read or write ("file too large", "no space left on device"), not Foundation's
    /// error dump, with a hint when the disk or a size limit is the cause.
    static func describe(_ error: any Error) -> String {
        let ns = error as NSError
        let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError
        let code = ns.domain == NSPOSIXErrorDomain ? ns.code : underlying?.domain == NSPOSIXErrorDomain ? underlying?.code : nil
        guard let code else { return ns.localizedDescription }
        let words = String(cString: strerror(Int32(code))).lowercased()
        return [EFBIG, ENOSPC, EDQUOT].contains(Int32(code)) ? "\(words) (the disk is full or a file size limit was reached)" : words
    }

    /// Moves a staged file to its content address (or drops it if the same content is already there).
    public func commit(_ staged: Staged) throws(BoardError) {
        let destination = path(forSHA256: staged.sha256)
        if FileManager.default.fileExists(atPath: destination) {
            unlink(staged.temporaryPath)
            return
        }
        guard rename(staged.temporaryPath, destination) == 0 else {
            throw BoardError(.io, "cannot move the artifact into \(destination): \(String(cString: strerror(errno)))")
        }
    }

    /// Deletes a staged file that will not be committed.
    public func discard(_ staged: Staged) {
        unlink(staged.temporaryPath)
    }

    /// Recomputes the SHA-256 of a stored artifact; nil when the file is missing or unreadable.
    public func currentSHA256(of sha256: String) -> String? {
        Self.sha256(ofFile: path(forSHA256: sha256))
    }

    /// SHA-256 (hex) of a file's content; nil when it cannot be read.
    public static func sha256(ofFile path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        } catch { return nil }
        return hasher.finalize().hex
    }

    /// How long a staged file may go unmodified before it counts as left behind, whoever staged it.
    public static let stagingLifetime: TimeInterval = 3600

    /// Deletes the staged files that a registration killed mid-way left in `tmp`: those whose process (the number
    /// their name starts with) no longer runs, and any not modified for ``stagingLifetime``. A copy in progress
    /// belongs to a live process and is written to as it goes, so it is kept. Failures are ignored: this is tidying.
    public func removeStaleStaging(now: Date = Date()) {
        let folder = root + "/tmp"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtimespec.tv_sec))
            #else
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
            #endif
            let owner = name.split(separator: "-", maxSplits: 1).first.flatMap { pid_t($0) }
            let ownerGone = owner.map { $0 > 0 && kill($0, 0) != 0 && errno == ESRCH } ?? false
            if ownerGone || now.timeIntervalSince(modified) > Self.stagingLifetime { unlink(path) }
        }
    }

    private func ensureFolders() throws(BoardError) {
        for folder in [root, root + "/sha256", root + "/tmp"] {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw BoardError(.io, "cannot create the artifact store folder \(folder): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw BoardError(.io, "the artifact store \(folder) is not a folder")
            }
            if info.st_mode & 0o077 != 0 {
                throw BoardError(
                    .io,
                    "the artifact store folder \(folder) is accessible to other users (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 700 \(folder)"
                )
            }
        }
    }
}
