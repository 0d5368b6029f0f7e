public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process of the tests: started with `posix_spawn`, and waited for on its own pid by a thread of its own.
///
/// Every process a test starts goes through this type (``run(_:_:environment:directory:input:timeout:outputLimit:)``
/// for a command that runs to its end, ``ChildProcess`` for one that runs beside the test). It depends on no run loop
/// and no `SIGCHLD` handler: a thread blocks in `waitid` on the child's own pid, so an exit is never missed however
/// many processes start and end at once, and the child is reaped only under the lock that ``signal(_:)`` takes, so a
/// signal never reaches another process that was given the same pid later.
///
/// Every descriptor it opens is close-on-exec in this process (a process another test starts at the same moment never
/// inherits one) and is closed by whoever reads or writes it: the output readers at the end of the output, the input
/// by ``closeInput()`` or at the end of a run.
///
/// Setting `PLUGBOARD_TEST_HANG_CHILD` in the test process's environment makes the first child whose command line
/// contains its value (any child for `1`) run its command and then never exit, holding its output open: the way to
/// see that a stuck child fails its test by the test's time limit, with the test's name, and the run goes on.
public final class Spawned: Sendable {
    /// Where the child's standard input comes from.
    public enum Input: Sendable {
        /// A pipe that this process writes (``writeInput(_:)``) and closes (``closeInput()``).
        case pipe
        /// `/dev/null`.
        case null
        /// A file, read from its start.
        case file(String)
    }

    /// Where one of the child's outputs goes.
    public enum Output: Sendable {
        /// A pipe that this process reads (``readOutput(limit:)``, ``readOutputLines(_:)``).
        case pipe
        /// `/dev/null`.
        case null
    }

    /// Why a child could not be started, or a run did not end as asked.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The process id.
    public let pid: pid_t
    /// What was started, for messages.
    public let commandLine: String
    /// This process's end of the child's standard input (nil once closed, or when not a pipe).
    private let input: Mutex<Int32?>
    /// This process's ends of the child's standard output and error (nil when not pipes); each is closed by its reader.
    private let outputs: Mutex<[Int32?]>
    /// The child's end, shared with the thread that waits for it (which must not keep this object alive).
    final class Life: Sendable {
        /// The wait status, once the child exited and was reaped.
        let status = Mutex<Int32?>(nil)
        /// Left once the child exited and was reaped.
        let ended = DispatchGroup()
        /// Set when a run's timeout killed the child.
        let timedOut = Atomic<Bool>(false)
    }

    let life = Life()

    /// Starts `executable` (an absolute path, or a name looked up in `PATH`) with `arguments`, in `directory` (this
    /// process's when nil), with exactly `environment` (this process's when nil).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        input: Input = .null, output: Output = .pipe, error: Output = .pipe
    ) throws {
        Self.ignoreBrokenPipes
        var command = [executable] + arguments
        commandLine = command.joined(separator: " ")
        if Self.shouldHang(commandLine) {
            // The command runs, then the shell becomes a sleep that never ends and keeps the output open.
            command = ["/bin/sh", "-c", "\"$@\"; exec sleep infinity", "sh"] + command
        }

        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        do {
            func pipeEnds() throws -> (read: Int32, write: Int32) {
                var ends: [Int32] = [-1, -1]
                guard systemPipe2(&ends, O_CLOEXEC) == 0 else { throw Self.failure("could not make a pipe for \(command[0])") }
                return (ends[0], ends[1])
            }
            func open(_ path: String, _ flags: Int32) throws -> Int32 {
                let descriptor = Glibc.open(path, flags | O_CLOEXEC)
                guard descriptor >= 0 else { throw Self.failure("could not open \(path) for \(command[0])") }
                return descriptor
            }
            var inputEnd: Int32?
            switch input {
            case .pipe:
                let ends = try pipeEnds()
                childEnds.append(ends.read)
                parentEnds.append(ends.write)
                inputEnd = ends.write
            case .null: childEnds.append(try open("/dev/null", O_RDONLY))
            case .file(let path): childEnds.append(try open(path, O_RDONLY))
            }
            var outputEnds: [Int32?] = []
            for choice in [output, error] {
                switch choice {
                case .pipe:
                    let ends = try pipeEnds()
                    childEnds.append(ends.write)
                    parentEnds.append(ends.read)
                    outputEnds.append(ends.read)
                case .null:
                    childEnds.append(try open("/dev/null", O_WRONLY))
                    outputEnds.append(nil)
                }
            }
            pid = try Self.spawn(command, environment: environment, directory: directory, standard: childEnds)
            self.input = Mutex(inputEnd)
            self.outputs = Mutex(outputEnds)
        } catch {
            for descriptor in parentEnds { close(descriptor) }
            throw error
        }
        life.ended.enter()
        let pid = self.pid
        let life = self.life
        let logged = ChildCPULog.start(command)
        Thread {
            var info = siginfo_t()
            // Wait without reaping, then reap under the lock that signal(_:) takes: until then the pid stays ours.
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
            life.status.withLock { status in
                var raw: Int32 = 0
                while true {
                    var usage = rusage()
                    let reaped = wait4(pid, &raw, 0, &usage)
                    if reaped == pid {
                        if let logged { ChildCPULog.record(logged, usage: usage) }
                        break
                    }
                    if reaped < 0, errno == EINTR { continue }
                    // Reaped by someone else (no one here should): an exit all the same, with an unknown status.
                    raw = 255 << 8
                    break
                }
                status = raw
            }
            life.ended.leave()
        }.start()
    }

    deinit {
        if isRunning {
            signal(SIGKILL)
            _ = life.ended.wait(timeout: .now() + 60)
        }
        closeInput()
        outputs.withLock { ends in
            for case let descriptor? in ends { close(descriptor) }
            ends = ends.map { _ in nil }
        }
    }

    // MARK: The child's life

    /// Whether it still runs (a child that exited but is not reaped yet counts as running for a moment).
    public var isRunning: Bool { life.status.withLock { $0 == nil } }

    /// Its exit code, or the number of the signal that ended it; nil while it runs.
    public var exitStatus: Int32? {
        life.status.withLock { raw in raw.map { $0 & 0x7f == 0 ? ($0 >> 8) & 0xff : $0 & 0x7f } }
    }

    /// Whether it ended by a signal (a crash, or a kill) rather than by calling exit.
    public var endedBySignal: Bool { life.status.withLock { raw in raw.map { $0 & 0x7f != 0 } ?? false } }

    /// Sends `signal` unless it already exited.
    public func signal(_ signal: Int32) {
        life.status.withLock { raw in
            if raw == nil { _ = kill(pid, signal) }
        }
    }

    /// Waits until it exits, at most `timeout` (nil: for ever); answers whether it did. Blocks the calling thread: off the
    /// shared pool only.
    @discardableResult
    public func waitBlocking(timeout: Duration? = nil) -> Bool {
        guard let timeout else {
            life.ended.wait()
            return true
        }
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        return life.ended.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
    }

    /// Waits until it exits, at most `timeout`; answers whether it did. Sleeps between looks: it holds no thread.
    /// When the waiting task is cancelled (a test past its time limit), the child is killed and this throws.
    public func waitForExit(timeout: Duration) async throws -> Bool {
        do {
            try await eventually("process \(pid) to exit", timeout: timeout, poll: .milliseconds(2)) { !isRunning }
            return true
        } catch is NotEventually {
            return false
        } catch {
            signal(SIGKILL)
            throw error
        }
    }

    // MARK: Input and output

    /// Writes `data` to its standard input (a pipe); a child that exited before reading it is not an error here.
    public func writeInput(_ data: Data) {
        input.withLock { descriptor in
            guard let descriptor else { return }
            data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0, errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
        }
    }

    /// Closes its standard input (a pipe): the child reads its end.
    public func closeInput() {
        input.withLock { descriptor in
            if let open = descriptor { close(open) }
            descriptor = nil
        }
    }

    /// Takes this process's end of standard output (`0`) or error (`1`): the caller reads and closes it.
    private func takeOutput(_ index: Int) -> Int32? {
        outputs.withLock { ends in
            defer { ends[index] = nil }
            return ends[index]
        }
    }

    /// Reads standard output (`error: false`) or error to its end, or, once the child exited, to what the pipe holds
    /// (a grandchild that keeps the pipe open does not hold the read), and closes it. Empty when not a pipe.
    public func readOutput(error: Bool = false, limit: Int = .max) throws(POSIXError) -> Data {
        guard let descriptor = takeOutput(error ? 1 : 0) else { return Data() }
        defer { close(descriptor) }
        var data = Data()
        let exited = { !self.isRunning }
        try readPipe(descriptor, until: exited) { chunk throws(POSIXError) in
            data.append(contentsOf: chunk)
            if data.count > limit { throw POSIXError(.EFBIG) }
        }
        return data
    }

    /// Hands every chunk of standard output (`error: false`) or error to `chunk` as it comes, until its end as
    /// ``readOutput(error:limit:)`` reads it, and closes it. Blocks: run it on a thread of its own.
    public func readOutputChunks(error: Bool = false, _ chunk: ([UInt8]) -> Void) {
        guard let descriptor = takeOutput(error ? 1 : 0) else { return }
        defer { close(descriptor) }
        let exited = { !self.isRunning }
        try? readPipe(descriptor, until: exited) { bytes throws(POSIXError) in chunk(Array(bytes)) }
    }

    // MARK: Helpers

    /// Runs `body` on a new thread (not Dispatch's pool, which adds threads slowly once its threads all block).
    static func onThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread {
            body()
            group.leave()
        }.start()
    }

    static func failure(_ sentence: String) -> Failure {
        Failure(description: sentence + (errno == 0 ? "" : " (\(String(cString: strerror(errno))))"))
    }

    /// Writing to a child that has exited must fail with EPIPE, not end the test process: set once, before the first
    /// child (children get the default back, see ``spawn(_:environment:directory:standard:)``).
    private static let ignoreBrokenPipes: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    /// Whether this child is the one `PLUGBOARD_TEST_HANG_CHILD` asks to hang (at most one per test process).
    private static func shouldHang(_ commandLine: String) -> Bool {
        guard let wanted = ProcessInfo.processInfo.environment["PLUGBOARD_TEST_HANG_CHILD"], !wanted.isEmpty,
            wanted == "1" || commandLine.contains(wanted)
        else { return false }
        return hung.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
    }

    private static let hung = Atomic<Bool>(false)

    /// `posix_spawn` with `standard` as descriptors 0, 1 and 2, default signal handling and an empty signal mask.
    private static func spawn(_ command: [String], environment: [String: String]?, directory: String?, standard: [Int32]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, descriptor) in standard.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, descriptor, Int32(target))
        }
        // Nothing else this process holds reaches the child, even a descriptor opened without close-on-exec (a file
        // another test is writing: a child holding it open would make that file's execution fail with ETXTBSY).
        _ = addCloseFrom(&actions, 3)
        if let directory { _ = addChdir(&actions, directory) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var every = sigset_t()
        sigfillset(&every)
        posix_spawnattr_setsigdefault(&attributes, &every)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        var result: Int32 = 0
        // ETXTBSY: an executable another test has just written can be held open for writing, for a moment, by a child
        // that a third thread is starting (until that child's descriptors are closed): tried again shortly.
        for attempt in 0..<50 {
            if attempt > 0 { usleep(20_000) }
            result =
                command[0].contains("/")
                ? posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
                : posix_spawnp(&pid, command[0], &actions, &attributes, argv, envp)
            if result != ETXTBSY { break }
        }
        guard result == 0 else {
            throw Failure(description: "could not start \(command[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }
}
