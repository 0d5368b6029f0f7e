import Foundation
import PlugboardModel
import PlugboardStore

#if canImport(Glibc)
// Once a dependency loads CoreFoundation, stat() and its fields resolve to its declaration, which must be imported.
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way the CLI reads a file argument or stdin: in chunks, refusing input past a byte limit before it is
/// all in memory, so that `/dev/zero`, a runaway pipe or a huge file gets one sentence instead of exhausting memory.
enum BoundedInput {
    /// The largest manifest read (the manifest parser's own limit).
    static let manifestLimit = PluginManifest.maximumSize
    /// The largest Unleash features document read by `flag import` and `flag evaluate --features`.
    static let featuresLimit = 16 << 20
    /// The longest line of a `--contexts` input.
    static let contextLineLimit = 64 << 10
    /// The largest secret value read by `secret set --from-file` (what secure storage holds a value).
    static let secretLimit = 1 << 20
    /// The longest answer read from a terminal prompt.
    static let answerLimit = 4 << 10

    private static let chunkSize = 64 << 10

    /// Reads `path` (a regular file or a pipe such as bash's `<(…)`), or stdin for `-`, refusing more than `limit` bytes.
    ///
    /// - Parameter what: what the input is, for messages: "manifest", "features", "contexts", "value".
    /// - Throws: ``BoardError`` `.invalidInput`: the file does not exist, is a folder, cannot be read, or is larger
    ///   than `limit` ("the manifest /dev/zero is larger than 1 MiB; nothing was changed").
    static func read(path: String, limit: Int, what: String) throws(BoardError) -> Data {
        if path == "-" { return try read(fd: STDIN_FILENO, limit: limit, named: "the \(what) on stdin") }
        let fd = try open(path, what: what)
        defer { close(fd) }
        return try read(fd: fd, limit: limit, named: "the \(what) \(path)")
    }

    /// Whether stdin is a terminal: a person is there to answer a prompt.
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Whether stdout is a terminal rather than a file or a pipe.
    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// The permission bits of `path` (`0o640`) when it is a regular file; nil for a folder, a device or nothing there.
    static func regularFilePermissions(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return UInt32(info.st_mode & 0o777)
    }

    /// Opens a file argument for reading, refusing a folder.
    private static func open(_ path: String, what: String) throws(BoardError) -> Int32 {
        let fd = systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw BoardError(.invalidInput, "the \(what) file \(path) does not exist") }
            throw BoardError(.invalidInput, "the \(what) file \(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else {
            close(fd)
            throw BoardError(.invalidInput, "the \(what) file \(path) cannot be read (it is a folder)")
        }
        return fd
    }

    /// Reads one line from stdin (without its newline), refusing more than `limit` bytes; nil at end of input.
    static func line(limit: Int = answerLimit, what: String) throws(BoardError) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = systemRead(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
            if bytes.count > limit { throw tooLarge("the \(what)", limit: limit) }
        }
    }

    /// Calls `body` with each line of `path` (or stdin for `-`) and its 1-based number, reading in chunks: memory stays
    /// the same whatever the input's size. The newline and one `\r` before it are not part of the line; bytes that are
    /// not UTF-8 read as U+FFFD.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` when the input cannot be read or a line is longer than `limit` bytes
    ///   ("--contexts line 3 is longer than 64 KiB"), or what `body` throws.
    static func forEachLine(
        path: String, limit: Int, what: String, _ body: (String, Int) throws(BoardError) -> Void
    ) throws(BoardError) {
        let fd: Int32
        if path == "-" {
            fd = STDIN_FILENO
        } else {
            fd = try open(path, what: what)
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        let name = path == "-" ? "the \(what) on stdin" : "the \(what) \(path)"
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var pending: [UInt8] = []
        var lineNumber = 1
        func emit(_ bytes: UnsafeBufferPointer<UInt8>) throws(BoardError) {
            let end = bytes.last == UInt8(ascii: "\r") ? bytes.count - 1 : bytes.count
            try body(String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self), lineNumber)
            lineNumber += 1
        }
        func tooLong() -> BoardError {
            BoardError(.invalidInput, "--\(what) line \(lineNumber) is longer than \(size(limit)); nothing was changed")
        }
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, chunkSize) }
            if count < 0 {
                if errno == EINTR { continue }
                throw BoardError(.invalidInput, "\(name) cannot be read (\(String(cString: strerror(errno))))")
            }
            if count == 0 { break }
            try buffer.withUnsafeBufferPointer { (chunk) throws(BoardError) in
                var start = 0
                while let newline = chunk[start..<count].firstIndex(of: UInt8(ascii: "\n")) {
                    if pending.isEmpty {
                        guard newline - start <= limit else { throw tooLong() }
                        try emit(UnsafeBufferPointer(rebasing: chunk[start..<newline]))
                    } else {
                        pending.append(contentsOf: chunk[start..<newline])
                        guard pending.count <= limit else { throw tooLong() }
                        try pending.withUnsafeBufferPointer { (line) throws(BoardError) in try emit(line) }
                        pending.removeAll(keepingCapacity: true)
                    }
                    start = newline + 1
                }
                pending.append(contentsOf: chunk[start..<count])
                guard pending.count <= limit else { throw tooLong() }
            }
        }
        try pending.withUnsafeBufferPointer { (line) throws(BoardError) in try emit(line) }
    }

    /// A byte count as people write it: 1 MiB, 64 KiB, 100 bytes.
    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    private static func read(fd: Int32, limit: Int, named name: String) throws(BoardError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while true {
            // Never ask for more than one byte past the limit: that byte is enough to refuse.
            let wanted = min(chunkSize, limit + 1 - data.count)
            let count = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw BoardError(.invalidInput, "\(name) cannot be read (\(String(cString: strerror(errno))))")
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit { throw tooLarge(name, limit: limit) }
        }
    }

    private static func tooLarge(_ name: String, limit: Int) -> BoardError {
        BoardError(.invalidInput, "\(name) is larger than \(size(limit)); nothing was changed")
    }
}

/// open(2), named apart from ``BoundedInput``'s own `open`.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}

/// read(2), named apart from ``BoundedInput``'s own `read` methods.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
