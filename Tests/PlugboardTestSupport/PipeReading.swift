import Foundation

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
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }
}
