package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// `pipe2`, `posix_spawn_file_actions_addclosefrom_np` and `posix_spawn_file_actions_addchdir_np` are GNU extensions that the Glibc module does not show: looked up
// once by name. `pipe2` makes both ends close-on-exec at once, so no child another thread starts meanwhile inherits one.
typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
let systemPipe2 = unsafeBitCast(dlsym(nil, "pipe2")!, to: Pipe2.self)
typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
let addCloseFrom = unsafeBitCast(dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")!, to: AddCloseFrom.self)
typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
let addChdir = unsafeBitCast(dlsym(nil, "posix_spawn_file_actions_addchdir_np")!, to: AddChdir.self)

/// Reads `descriptor` with `read(2)` (not Foundation's `readDataToEndOfFile()`, which once crashed the whole test process
/// while many child processes failed at once) until its end, handing each chunk to `chunk`; once `exited` says so, only what the
/// pipe holds is read, so that a process that still holds the pipe's other end (a grandchild, or a server another test
/// started at the same moment) cannot keep the read waiting for ever. A failed read throws.
package func readPipe(
    _ descriptor: Int32, until exited: () -> Bool, _ chunk: (UnsafeRawBufferPointer) throws(POSIXError) -> Void
) throws(POSIXError) {
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    var draining = false
    while true {
        var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&polled, 1, draining ? 0 : 100)
        if ready < 0 {
            if errno == EINTR { continue }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        if ready == 0 {
            // Nothing to read now: after the process exited, what it wrote has been read.
            if draining { return }
            if exited() { draining = true }
            continue
        }
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            var failure: POSIXError?
            buffer.withUnsafeBytes { bytes in
                do throws(POSIXError) { try chunk(UnsafeRawBufferPointer(rebasing: bytes[..<count])) } catch { failure = error }
            }
            if let failure { throw failure }
        } else if count == 0 {
            return
        } else if errno != EINTR {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }
}
