public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A long-running child process (a host) whose standard output is collected line by line as it comes.
///
/// Its standard input stays open until ``closeInput()``: test hosts stop when it closes. It is started and waited for
/// by ``Spawned``; the child is killed when this object goes away.
public final class ChildProcess: Sendable {
    /// What the child printed, filled by reader threads.
    private final class Collected: Sendable {
        let lines = Mutex<[String]>([])
        /// When each line of ``lines`` was read (written under the lock of ``lines``).
        let times = Mutex<[Date]>([])
        let errors = Mutex<Data>(Data())
        /// Set once standard output reached its end: every line the child printed is in ``lines``.
        let outputEnded = Mutex(false)
    }

    private let child: Spawned
    private let collected = Collected()

    /// Starts `executable` with `arguments`, with this process's environment less every `PLUGBOARD_` variable, plus
    /// `environment`.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PLUGBOARD_") }
        env.merge(environment) { $1 }
        let child = try Spawned(executable, arguments, environment: env, input: .pipe)
        self.child = child
        let collected = self.collected
        // Each pipe is read on a thread of its own, not on Dispatch's pool: the readers block for the child's whole
        // life, and Dispatch adds threads to its pool only every second or so once they all block, which held up the
        // output of the fourth or fifth child of a test by seconds.
        Thread {
            var pending: [UInt8] = []
            child.readOutputChunks { chunk in
                pending.append(contentsOf: chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    collected.lines.withLock { lines in
                        lines.append(line)
                        collected.times.withLock { $0.append(Date()) }
                    }
                }
            }
            collected.outputEnded.withLock { $0 = true }
        }.start()
        Thread {
            child.readOutputChunks(error: true) { chunk in collected.errors.withLock { $0.append(contentsOf: chunk) } }
        }.start()
    }

    deinit { child.signal(SIGKILL) }

    /// The process id.
    public var pid: Int32 { child.pid }

    /// Every line printed so far.
    public var output: [String] { collected.lines.withLock { $0 } }

    /// Every line printed so far, with the time this process read it from the pipe (a few milliseconds after the
    /// child wrote it).
    public var stampedOutput: [(at: Date, line: String)] {
        collected.lines.withLock { lines in collected.times.withLock { times in zip(times, lines).map { (at: $0, line: $1) } } }
    }

    /// Whether it exited, killed by a signal (a crash) rather than by calling exit.
    public var exitedBySignal: Bool { child.endedBySignal }

    /// What it printed on stderr (complete once it exited).
    public var errorOutput: String { String(decoding: collected.errors.withLock { $0 }, as: UTF8.self) }

    /// Waits until a line printed after the first `after` lines satisfies `match`; returns its index, or nil after
    /// `timeout` (a guard against hanging, not a measurement) or when the process exits first.
    /// Sleeps between looks (it never blocks a thread of the shared pool).
    public func waitForLine(after: Int = 0, timeout: Duration = .eventDeadline, _ match: (String) -> Bool) async -> Int? {
        // Some(index) once a line matches, some(nil) once the process exited without one.
        let child = self.child
        let outcome = try? await eventually("a line of process \(pid)", timeout: timeout, poll: .milliseconds(2)) { () -> Int?? in
            let found = collected.lines.withLock { lines -> Int? in
                guard lines.count > after else { return nil }
                return lines[after...].firstIndex(where: match)
            }
            if let found { return found }
            return child.isRunning ? nil : .some(nil)
        }
        return outcome ?? nil
    }

    /// Whether it is still running.
    public var isRunning: Bool { child.isRunning }

    /// Waits until it exits by itself; returns when it did (by this process's clock, to within a few milliseconds), or
    /// nil when it still runs after `timeout` (a guard against hanging, not a measurement). Once it returns a time,
    /// ``output`` holds every line the child printed (its reader thread may lag behind the exit on a busy machine).
    public func waitForExit(timeout: Duration = .seconds(60)) async -> ContinuousClock.Instant? {
        guard (try? await child.waitForExit(timeout: timeout)) == true else { return nil }
        let exited = ContinuousClock.now
        await outputRead()
        return exited
    }

    /// Waits (at most ``Swift/Duration/eventDeadline``) until the reader thread has read the output to its end, once the child exited: a
    /// busy machine runs it a while after the exit, and ``output`` must then hold every line the child printed.
    private func outputRead() async {
        let collected = self.collected
        _ = try? await eventually("the end of process \(pid)'s output", poll: .milliseconds(2)) {
            collected.outputEnded.withLock { $0 }
        }
    }

    /// Closes its standard input (a test host stops then) and waits for it to exit; returns its exit status, or nil when
    /// it did not exit within `timeout`: it is then sent SIGTERM (and SIGKILL if that does not end it within ``Swift/Duration/eventDeadline``).
    /// Once it returns, ``output`` holds every line the child printed.
    @discardableResult
    public func closeInput(timeout: Duration = .eventDeadline) async -> Int32? {
        child.closeInput()
        guard (try? await child.waitForExit(timeout: timeout)) == true else {
            child.signal(SIGTERM)
            _ = await ended(within: .eventDeadline)
            return nil
        }
        await outputRead()
        return child.exitStatus
    }

    /// Sends `signal` (SIGTERM by default) and waits for the process to exit; returns its exit status, or nil (after
    /// killing it) when it did not exit within `timeout`.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Duration = .eventDeadline) async -> Int32? {
        child.signal(signal)
        return await ended(within: timeout)
    }

    /// Its exit status once it exits within `timeout` (with its output read to the end); otherwise (or when the waiting
    /// task is cancelled) it is killed, and nil.
    private func ended(within timeout: Duration) async -> Int32? {
        guard (try? await child.waitForExit(timeout: timeout)) == true else {
            child.signal(SIGKILL)
            _ = try? await child.waitForExit(timeout: .seconds(60))
            return nil
        }
        await outputRead()
        return child.exitStatus
    }
}

/// What `/proc` says about a process's hold on a board file (Linux only).
public enum BoardFileHold {
    /// Descriptors of `pid` that point at a deleted board file, its WAL or its shared memory.
    public static func deletedBoardFiles(pid: Int32, board: String) -> [String] {
        let folder = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)") }
            .filter { $0.hasPrefix(board) && $0.hasSuffix(" (deleted)") }
    }

    /// Whether `pid` holds a POSIX lock on the file at `path` (`/proc/locks`).
    ///
    /// One read of `/proc/locks` can miss a lock that is held all along: the kernel hands the file out a page per
    /// `read()` and finds where to go on by counting entries, so when other processes drop locks listed before ours
    /// between two pages (a busy test run does, hundreds of times a second), our entry moves back and is skipped.
    /// A lock cannot appear without being held, so the file is read up to `reads` times and one sighting is enough;
    /// a lock that is really gone is missing from every read.
    public static func holdsLock(pid: Int32, on path: String, reads: Int = 25) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        for _ in 0..<reads where locksListed(pid: pid, inode: UInt64(info.st_ino)) { return true }
        return false
    }

    private static func locksListed(pid: Int32, inode: UInt64) -> Bool {
        // Read to the end: a /proc file has no size, and a sized read would stop short.
        guard let handle = FileHandle(forReadingAtPath: "/proc/locks") else { return false }
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        try? handle.close()
        for line in text.split(separator: "\n") {
            // "1: POSIX  ADVISORY  READ 7428 fe:00:16228432 128 128"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "POSIX", Int32(fields[4]) == pid else { continue }
            if let listed = fields[5].split(separator: ":").last, UInt64(listed) == inode { return true }
        }
        return false
    }
}
