package import Foundation

#if canImport(Glibc)
import Glibc
private let systemRead = Glibc.read
#elseif canImport(Darwin)
import Darwin
private let systemRead = Darwin.read
#endif

extension FileHandle {
    /// Everything left to read, with `read(2)` directly, retrying when interrupted; a failed read throws.
    ///
    /// Instead of Foundation's `readDataToEndOfFile()`, which once crashed the whole test process ("Can't construct
    /// Array with count < 0") while many child processes failed at once: a harness problem then becomes one test's
    /// error, not the end of the run.
    package func readAll() throws(POSIXError) -> Data {
        try readAll(until: { false })
    }

    /// Everything the process wrote until it exited: reads as ``readAll()`` does, but stops once `exited` says so and
    /// the pipe has nothing more, even when another process still holds the pipe's other end (a server another test
    /// started at the same moment can inherit it), which would otherwise keep the read waiting for ever.
    ///
    /// More than `limit` bytes throw `EFBIG` (the child may then still be writing: the caller ends it).
    package func readAll(until exited: () -> Bool, limit: Int = .max) throws(POSIXError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var draining = false
        while true {
            var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, draining ? 0 : 100)
            if ready < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            if ready == 0 {
                // Nothing to read now: after the process exited, what it wrote has been read.
                if draining { return data }
                if exited() { draining = true }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
                if data.count > limit { throw POSIXError(.EFBIG) }
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }

    /// Marks both ends of `pipe` close-on-exec in this process: a child started with it still gets its end (dup2 makes
    /// a copy without the flag), but a process another test starts at the same moment does not inherit it and keep
    /// the pipe open after the child it was made for exited.
    package static func closeOnExec(_ pipe: Pipe) {
        for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
            _ = fcntl(handle.fileDescriptor, F_SETFD, fcntl(handle.fileDescriptor, F_GETFD) | FD_CLOEXEC)
        }
    }
}

/// Whether the process `pid` exited: gone, or a zombie not yet reaped (Foundation reaps it on a thread of its own).
package func processExited(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return true }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return false }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}
