import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a board that `plugboard init` and `plugboard plugin register` of some manifests just made, held in
/// memory: ``Sandbox/withBoard(_:)`` writes a copy of them instead of running the same commands for every test. The
/// files are those `init` leaves beside the board path: the board, its WAL when it is not empty, the master key file
/// and the board's key (not the WAL index, which SQLite rebuilds).
struct InitialBoard: Sendable {
    /// One file: its name after the board's path (`""` for the board itself), its bytes and its permission bits.
    struct File: Sendable {
        let suffix: String
        let bytes: Data
        let mode: mode_t
    }

    let files: [File]

    /// The boards made so far in this test process, by the manifests registered on them.
    private static let made = Mutex<[[String]: Task<InitialBoard, any Error>]>([:])

    /// The board of `manifests`, made by the first test that asks for it.
    static func of(_ manifests: [String]) async throws -> InitialBoard {
        let task = made.withLock { made in
            if let task = made[manifests] { return task }
            let task = Task { try await make(manifests) }
            made[manifests] = task
            return task
        }
        return try await task.value
    }

    /// The suffixes the commands are expected to leave beside the board; making a board fails should they leave another,
    /// so that a copy is never short of a file they came to write.
    private static let expected: Set<String> = ["", "-wal", "-shm", ".key", ".board-key"]

    /// Runs `init` (or copies the board it made, when there are manifests) and registers `manifests` in a sandbox of its
    /// own, whose files it reads.
    private static func make(_ manifests: [String]) async throws -> InitialBoard {
        let sandbox = try Sandbox()
        var commands: [[String]] = []
        if manifests.isEmpty { commands.append(["init"]) } else { try await of([]).copy(to: sandbox.board) }
        var written: Set<String> = []
        for (index, manifest) in manifests.enumerated() {
            let file = "manifest-\(index).json"
            try sandbox.write(file, manifest)
            written.insert(file)
            commands.append(["plugin", "register", sandbox.root.appendingPathComponent(file).path])
        }
        for command in commands {
            let result = try await sandbox.run(command)
            guard result.status == 0 else {
                throw InitialBoardError(description: "plugboard \(command.joined(separator: " ")) failed for a test's board: \(result)")
            }
        }
        let name = URL(fileURLWithPath: sandbox.board).lastPathComponent
        var files: [File] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path) where !written.contains(entry) {
            guard entry.hasPrefix(name) else {
                throw InitialBoardError(description: "the commands left \(entry) in the board's folder, which the tests do not copy")
            }
            let suffix = String(entry.dropFirst(name.count))
            guard Self.expected.contains(suffix) else {
                throw InitialBoardError(description: "the commands left \(entry), which the tests do not copy")
            }
            let path = sandbox.board + suffix
            var info = stat()
            guard stat(path, &info) == 0 else { throw InitialBoardError(description: "cannot stat \(path)") }
            // The WAL index is rebuilt from the WAL by the first connection; an empty WAL is the same as none.
            if suffix == "-shm" || (suffix == "-wal" && info.st_size == 0) { continue }
            files.append(File(suffix: suffix, bytes: try Data(contentsOf: URL(fileURLWithPath: path)), mode: info.st_mode & 0o777))
        }
        return InitialBoard(files: files)
    }

    /// Writes the files beside `board`, each with the permission bits `init` gave it; refuses to overwrite a file.
    func copy(to board: String) throws {
        for file in files {
            let path = board + file.suffix
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, file.mode)
            guard descriptor >= 0 else { throw InitialBoardError(description: "cannot create \(path): errno \(errno)") }
            defer { close(descriptor) }
            // The mode given to open(2) is masked by the umask: set it as init left it.
            guard fchmod(descriptor, file.mode) == 0 else { throw InitialBoardError(description: "cannot chmod \(path)") }
            try FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).write(contentsOf: file.bytes)
        }
    }
}

struct InitialBoardError: Error, CustomStringConvertible {
    let description: String
}
