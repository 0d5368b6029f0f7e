package import Crypto
package import Foundation
package import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The board's own Ed25519 keys, with which `plugboard serve` signs host snapshots: kept in the file `<board>.board-key`
/// beside the master key (mode 0600, never in the board), made by `plugboard init` and on first use for older boards.
///
/// The file holds the current key and, during a rotation, the previous one: `plugboard board-key rotate` makes a new
/// current key and keeps the old one, so that snapshots are signed by both and hosts that know only the old key learn
/// the new one from them; `plugboard board-key retire` drops the previous key once hosts follow.
package struct BoardKeyring: Sendable {
    /// The keys, the current one first.
    package let keys: [Curve25519.Signing.PrivateKey]

    static let header = "-----BEGIN PLUGBOARD BOARD KEYS-----"
    static let footer = "-----END PLUGBOARD BOARD KEYS-----"

    /// A keyring of `keys` (the current one first).
    package init(keys: [Curve25519.Signing.PrivateKey]) { self.keys = keys }

    /// A new keyring with one new key.
    package static func generate() -> BoardKeyring { BoardKeyring(keys: [Curve25519.Signing.PrivateKey()]) }

    /// The public keys, base64 of their raw 32 bytes, the current one first.
    package var publicKeys: [String] { keys.map { $0.publicKey.rawRepresentation.base64EncodedString() } }

    /// The key ids, the current one first.
    package var keyIDs: [String] { keys.map { SigningKeys.keyID(publicKey: $0.publicKey.rawRepresentation) } }

    /// The path of the key file of the board at `boardPath`.
    package static func path(forBoard boardPath: String) -> String { boardPath + ".board-key" }

    /// The file's text.
    var text: String {
        ([Self.header] + keys.map { $0.rawRepresentation.base64EncodedString() } + [Self.footer]).joined(separator: "\n") + "\n"
    }

    /// Parses the file's text.
    static func parse(_ text: String, path: String) throws(BoardError) -> BoardKeyring {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.count >= 3, lines.count <= 6, lines.first == header, lines.last == footer else {
            throw BoardError(.invalidInput, "\(path) is not a board key file; make one with plugboard board-key rotate")
        }
        var keys: [Curve25519.Signing.PrivateKey] = []
        for line in lines.dropFirst().dropLast() {
            guard let raw = Data(base64Encoded: line), raw.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)
            else { throw BoardError(.invalidInput, "\(path) holds a line that is not an Ed25519 private key") }
            keys.append(key)
        }
        return BoardKeyring(keys: keys)
    }
}

extension BoardKeyring {
    /// The keyring of the board at `boardPath`, or nil when its key file does not exist. The file must be a regular
    /// file (not a symbolic link) of the current user or root, readable by nobody else.
    package static func load(boardPath: String) throws(BoardError) -> BoardKeyring? {
        let path = path(forBoard: boardPath)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw BoardError(.invalidInput, "the board key file \(path) is a symbolic link, which is refused") }
            throw BoardError(.io, "cannot open the board key file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw BoardError(.invalidInput, "the board key file \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() || info.st_uid == 0 else {
            throw BoardError(
                .invalidInput, "the board key file \(path) belongs to user id \(info.st_uid), not to the current user or root; chown it")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw BoardError(
                .invalidInput,
                "the board key file \(path) is readable or writable by its group or others (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 \(path)"
            )
        }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var length = 0
        while length < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + length, $0.count - length) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw BoardError(.io, "cannot read the board key file \(path): \(String(cString: strerror(errno)))")
            }
            length += n
        }
        return try parse(String(decoding: bytes[0..<length], as: UTF8.self), path: path)
    }

    /// The keyring of the board at `boardPath`, made (a new key, in a new file of mode 0600) when it has none.
    package static func loadOrCreate(boardPath: String) throws(BoardError) -> BoardKeyring {
        if let keyring = try load(boardPath: boardPath) { return keyring }
        let keyring = generate()
        do { try keyring.write(toNew: path(forBoard: boardPath)) } catch  where error.code == .conflict {
            // Another process made it first: use theirs.
            if let keyring = try load(boardPath: boardPath) { return keyring }
            throw error
        }
        return keyring
    }

    /// Writes the keyring to a new file of mode 0600; refuses an existing path (`.conflict`).
    func write(toNew path: String) throws(BoardError) {
        try PrivateFile.create(path, Data(text.utf8))
    }

    /// Replaces the key file of the board at `boardPath` with this keyring (a new file renamed over the old one).
    package func save(boardPath: String) throws(BoardError) {
        let path = Self.path(forBoard: boardPath)
        let temporary = path + ".\(getpid()).new"
        unlink(temporary)
        try write(toNew: temporary)
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            throw BoardError(.io, "cannot replace the board key file \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// A file only its owner may read, written once.
package enum PrivateFile {
    /// Creates `path` with mode 0600 (never following a link, never replacing a file) and writes `data` to the disk.
    ///
    /// - Throws: ``BoardError`` `.conflict` when `path` exists, `.io` otherwise; nothing is left behind on failure.
    package static func create(_ path: String, _ data: Data) throws(BoardError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw BoardError(.conflict, "\(path) already exists") }
            throw BoardError(.io, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        let written = data.withUnsafeBytes { posixWrite(fd, $0.baseAddress, $0.count) }
        let synced = fchmod(fd, 0o600) == 0 && fsync(fd) == 0
        close(fd)
        guard written == data.count, synced else {
            unlink(path)
            throw BoardError(.io, "cannot write \(path): \(String(cString: strerror(errno))); nothing was kept")
        }
    }
}

/// write(2), named apart from ``BoardKeyring/write(toNew:)``.
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
