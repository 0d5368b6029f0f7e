import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A provider that reads the master key from a file, by default `<board path>.key` beside the board.
///
/// The file holds the base64 encoding of 32 random bytes followed by a newline, the same text as
/// `PLUGBOARD_MASTER_KEY`. ``create(at:)`` makes one.
///
/// Loading refuses, with an error that names the file and says what to do:
/// - a file that its group or others can read, write or execute (any bit of `0o077`): "run `chmod 600 <path>`";
/// - a file owned by another user than the current one or root;
/// - a symbolic link, unless ``allowsSymbolicLink`` is set. A link lets whoever controls the link's target
///   choose the key, and hides the real file from the permission check a reader makes with `ls -l`. When links are
///   allowed (for example for a secret mounted by an orchestrator), the permission and owner checks apply to the
///   file the link points to;
/// - anything but a regular file, a file larger than 4 KiB, and text that is not base64 of exactly 32 bytes.
///
/// All checks are made on the open file descriptor (`fstat`), not on the path, so the file cannot be swapped
/// between the check and the read.
public struct KeyFileProvider: KeyProvider, CustomStringConvertible {
    /// The key file's path.
    public let path: String
    /// Whether `path` may be a symbolic link. `false` by default.
    public var allowsSymbolicLink: Bool

    /// The largest key file read: 4 KiB. A key file is 45 bytes.
    static let maximumFileSize = 4096

    /// Creates a provider for the key file at `path`.
    public init(path: String, allowsSymbolicLink: Bool = false) {
        self.path = path
        self.allowsSymbolicLink = allowsSymbolicLink
    }

    /// Creates a provider for the key file of the board at `boardPath`: `<boardPath>.key`.
    public init(boardPath: String) {
        self.init(path: Self.keyFilePath(forBoardAt: boardPath))
    }

    /// The key file of the board at `boardPath`: `<boardPath>.key`.
    public static func keyFilePath(forBoardAt boardPath: String) -> String {
        boardPath + ".key"
    }

    /// Reads the key file, checking its type, owner and permissions first.
    ///
    /// - Throws: ``KeyProviderError`` with code `notFound`, `symbolicLink`, `notRegularFile`, `wrongOwner`,
    ///   `insecurePermissions`, `malformed` or `ioFailure`. Each names the file; none contains key material.
    public func loadMasterKey() throws(KeyProviderError) -> MasterKey {
        var flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK
        if !allowsSymbolicLink { flags |= O_NOFOLLOW }
        let fd = open(path, flags)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT:
                throw KeyProviderError(
                    .notFound,
                    "the master key file \(path) does not exist; create the board with plugboard init, or set PLUGBOARD_MASTER_KEY",
                    path: path
                )
            case ELOOP:
                throw KeyProviderError(
                    .symbolicLink,
                    "the master key file \(path) is a symbolic link, which is refused; put the key file itself at this path",
                    path: path
                )
            default:
                throw Self.ioError("open", path: path, errno: code)
            }
        }
        defer { close(fd) }

        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw Self.ioError("inspect", path: path, errno: errno)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw KeyProviderError(
                .notRegularFile, "the master key file \(path) is not a regular file; put the key file itself at this path", path: path)
        }
        let owner = info.st_uid
        guard owner == geteuid() || owner == 0 else {
            throw KeyProviderError(
                .wrongOwner,
                "the master key file \(path) belongs to user id \(owner), not to the current user (\(geteuid())) or root; give it to the user that runs Plugboard with chown",
                path: path
            )
        }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 == 0 else {
            throw KeyProviderError(
                .insecurePermissions,
                "the master key file \(path) is readable or writable by its group or others (mode \(Self.octal(permissions))); run chmod 600 \(path)",
                path: path
            )
        }
        guard Int(info.st_size) <= Self.maximumFileSize else {
            throw KeyProviderError(
                .malformed,
                "the master key file \(path) is \(info.st_size) bytes, too large for a key file; it must hold only the base64 encoding of 32 bytes",
                path: path
            )
        }

        var buffer = [UInt8](repeating: 0, count: Self.maximumFileSize + 1)
        defer { wipe(&buffer) }
        var length = 0
        while length < buffer.count {
            let n = buffer.withUnsafeMutableBytes { raw in
                read(fd, raw.baseAddress! + length, raw.count - length)
            }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.ioError("read", path: path, errno: errno)
            }
            length += n
        }
        guard length <= Self.maximumFileSize else {
            throw KeyProviderError(
                .malformed, "the master key file \(path) is too large for a key file; it must hold only the base64 encoding of 32 bytes",
                path: path)
        }
        var text = Array(buffer[0..<length])
        defer { wipe(&text) }
        do {
            return try MasterKey(base64EncodedUTF8: text, source: "The master key file \(path)")
        } catch {
            var error = error
            error.path = path
            throw error
        }
    }

    /// Reads the key file. See ``loadMasterKey()``.
    public func masterKey() async throws -> MasterKey {
        try loadMasterKey()
    }

    /// Creates a key file at `path` holding a new random key, and returns the key.
    ///
    /// See ``write(_:to:)`` for how the file is created.
    @discardableResult
    public static func create(at path: String) throws(KeyProviderError) -> MasterKey {
        let key = MasterKey.generate()
        try write(key, to: path)
        return key
    }

    /// Writes `key` to a new file at `path`.
    ///
    /// The file is created with `open(O_CREAT | O_EXCL | O_NOFOLLOW, 0600)`: it has mode 0600 from the first
    /// instant (never created wider and narrowed later), an existing file or link at `path` is never overwritten,
    /// and the data is `fsync`ed before returning. If the process umask removed owner bits, the new file is set to
    /// exactly 0600 through its descriptor. On failure the partial file is removed.
    ///
    /// - Throws: ``KeyProviderError`` with code `KeyProviderError.Code.alreadyExists` if something exists at
    ///   `path`, or `KeyProviderError.Code.ioFailure`.
    public static func write(_ key: MasterKey, to path: String) throws(KeyProviderError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST {
                throw KeyProviderError(
                    .alreadyExists,
                    "a master key file already exists at \(path) and is never overwritten; move it away first if you really mean to replace it (values encrypted under it become unreadable)",
                    path: path
                )
            }
            throw ioError("create", path: path, errno: code)
        }
        var succeeded = false
        defer {
            close(fd)
            if !succeeded { unlink(path) }
        }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & 0o777 != 0o600 {
            guard fchmod(fd, 0o600) == 0 else { throw ioError("set the mode of", path: path, errno: errno) }
        }
        var text = Array(key.withUnsafeBytes { Data($0) }.base64EncodedData()) + [0x0A]
        defer { wipe(&text) }
        var written = 0
        while written < text.count {
            let n = text.withUnsafeBytes { raw in
                posixWrite(fd, raw.baseAddress! + written, raw.count - written)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw ioError("write", path: path, errno: errno)
            }
            written += n
        }
        guard fsync(fd) == 0 else { throw ioError("flush", path: path, errno: errno) }
        succeeded = true
    }

    /// Atomically replaces the key file at `path` with one holding `key`, for master-key rotation.
    ///
    /// The new key is written with ``write(_:to:)`` to a temporary file in the same directory, then renamed over
    /// `path`, and the directory is `fsync`ed. A reader sees either the old file or the new one, never a partial
    /// file. Rotate in this order so that no crash loses the key that the board needs:
    ///
    /// 1. `let new = MasterKey.generate()`, and write it to `<path>.next` with ``write(_:to:)``;
    /// 2. `engine.rotateMasterKey(to: new)` (one transaction: the board now needs `new`);
    /// 3. `rename("<path>.next", path)`, or `replace(at: path, with: new)`.
    ///
    /// After a crash between 2 and 3, the board's key check value tells which of the two files holds its key.
    ///
    /// - Throws: ``KeyProviderError`` with code `KeyProviderError.Code.ioFailure`.
    public static func replace(at path: String, with key: MasterKey) throws(KeyProviderError) {
        let temporary = path + ".tmp-" + UUID().uuidString
        try write(key, to: temporary)
        do {
            try move(temporary, to: path)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Renames the key file at `source` to `path`, replacing any file there atomically, and `fsync`s the
    /// directory so that the rename survives a crash: step 3 of a rotation (see ``replace(at:with:)``), moving
    /// `<path>.next` into place.
    ///
    /// - Throws: ``KeyProviderError`` with code `KeyProviderError.Code.ioFailure`; nothing was renamed.
    public static func move(_ source: String, to path: String) throws(KeyProviderError) {
        guard rename(source, path) == 0 else {
            throw ioError("replace", path: path, errno: errno)
        }
        let directory = (path as NSString).deletingLastPathComponent
        let dfd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    /// Names the file, never a key.
    public var description: String { "KeyFileProvider(\(path))" }

    private static func ioError(_ action: String, path: String, errno code: Int32) -> KeyProviderError {
        let reason = String(cString: strerror(code))
        return KeyProviderError(
            .ioFailure, "could not \(action) the master key file \(path): \(reason); check the folder and its permissions", path: path)
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// `write(2)`, named apart from ``KeyFileProvider/write(_:to:)``.
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #elseif canImport(Musl)
    return Musl.write(fd, buffer, count)
    #elseif canImport(Darwin)
    return Darwin.write(fd, buffer, count)
    #endif
}
