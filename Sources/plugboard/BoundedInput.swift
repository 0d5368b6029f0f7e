import Foundation
import PlugboardStore

#if canImport(Glibc)
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
    /// The largest `--contexts` input read by `flag evaluate`.
    static let contextsLimit = 64 << 20
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
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw BoardError(.invalidInput, "the \(what) file \(path) does not exist") }
            throw BoardError(.invalidInput, "the \(what) file \(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else {
            throw BoardError(.invalidInput, "the \(what) file \(path) cannot be read (it is a folder)")
        }
        return try read(fd: fd, limit: limit, named: "the \(what) \(path)")
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

    /// Checks that no line of `data` is longer than `limit` bytes.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` naming the first line that is ("--contexts line 3 is longer than 64 KiB").
    static func checkLines(_ data: Data, limit: Int, what: String) throws(BoardError) {
        var lineNumber = 1
        var length = 0
        for byte in data {
            if byte == UInt8(ascii: "\n") {
                lineNumber += 1
                length = 0
            } else {
                length += 1
                if length > limit {
                    throw BoardError(.invalidInput, "\(what) line \(lineNumber) is longer than \(size(limit)); nothing was changed")
                }
            }
        }
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

/// read(2), named apart from ``BoundedInput``'s own `read` methods.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
