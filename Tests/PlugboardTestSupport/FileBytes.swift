public import Foundation

/// Reads the raw bytes of a board file (or its `-wal`, `-shm`) in a child process.
///
/// A test that holds SQLite connections to a board must not open and close the board's files itself: on Linux,
/// closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's included (SQLite's
/// "How To Corrupt An SQLite Database File", section 2.2). `cat` reads them in a process of its own.
public enum FileBytes {
    /// The file's bytes, or nil when it does not exist.
    public static func readIfPresent(_ path: String) throws -> Data? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try read(path)
    }

    /// The file's bytes; throws when `cat` cannot read it.
    public static func read(_ path: String) throws -> Data {
        let result = try Spawned.runBlocking("/bin/cat", ["--", path], outputLimit: .max)
        guard result.status == 0 else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        return result.stdout
    }
}
