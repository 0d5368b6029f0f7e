public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Spawned {
    /// What a run to the end produced, as bytes.
    public struct Finished: Sendable {
        /// The exit code, or the number of the signal that ended it.
        public let status: Int32
        public let stdout: Data
        public let stderr: Data

        /// The same, with both outputs read as UTF-8.
        public var text: CLIResult {
            CLIResult(status: status, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
        }
    }

    /// Runs a command to its end, blocking the calling thread (off the shared pool only): writes `input` (or gives it
    /// `inputFile`), reads both outputs (error on a thread of its own, so no output can block the child) and waits for
    /// the exit. A child still running after `timeout` is killed and the run throws, naming it; more than
    /// `outputLimit` bytes on either output kill it too.
    public static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        input: Data? = nil, inputFile: String? = nil, timeout: Duration = .eventDeadline, outputLimit: Int = 64 << 20
    ) throws -> Finished {
        let child = try Spawned(
            executable, arguments, environment: environment, directory: directory,
            input: inputFile.map { .file($0) } ?? (input == nil ? .null : .pipe))
        return try child.collect(input: input, timeout: timeout, outputLimit: outputLimit)
    }

    /// ``runBlocking(_:_:environment:directory:input:inputFile:timeout:outputLimit:)`` on a thread outside the shared
    /// pool; a cancelled task (a test past its time limit) kills the child, and the run throws `CancellationError`.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        input: Data? = nil, inputFile: String? = nil, timeout: Duration = .eventDeadline, outputLimit: Int = 64 << 20
    ) async throws -> Finished {
        let child = try Spawned(
            executable, arguments, environment: environment, directory: directory,
            input: inputFile.map { .file($0) } ?? (input == nil ? .null : .pipe))
        let result = try await withTaskCancellationHandler {
            try await Sandbox.offPool { try child.collect(input: input, timeout: timeout, outputLimit: outputLimit) }
        } onCancel: {
            child.signal(SIGKILL)
        }
        try Task.checkCancellation()
        return result
    }

    /// Writes `input`, reads both outputs to their end and waits for the exit (see
    /// ``runBlocking(_:_:environment:directory:input:inputFile:timeout:outputLimit:)``).
    public func collect(input data: Data?, timeout: Duration, outputLimit: Int) throws -> Finished {
        let errors = Mutex(Swift.Result<Data, POSIXError>.success(Data()))
        let readers = DispatchGroup()
        Self.onThread(readers) {
            errors.withLock { $0 = Swift.Result { () throws(POSIXError) in try self.readOutput(error: true, limit: outputLimit) } }
        }
        Self.onThread(readers) {
            if let data { self.writeInput(data) }
            self.closeInput()
        }
        // A child that outlives the timeout is killed, which ends its output.
        let watchdog = DispatchWorkItem { [weak self] in
            guard let self, self.isRunning else { return }
            self.life.timedOut.store(true, ordering: .relaxed)
            self.signal(SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds)), execute: watchdog)
        defer { watchdog.cancel() }
        let output = Swift.Result { () throws(POSIXError) in try readOutput(limit: outputLimit) }
        if case .failure = output { signal(SIGKILL) }
        readers.wait()
        let errorOutput = errors.withLock { $0 }
        if case .failure = errorOutput { signal(SIGKILL) }
        waitBlocking()
        let stderr = (try? errorOutput.get()) ?? Data()
        if life.timedOut.load(ordering: .relaxed) {
            throw Self.failure(
                "\(commandLine.prefix(200)) was still running after \(timeout) and was killed; stderr: \(String(decoding: stderr.suffix(2_000), as: UTF8.self))"
            )
        }
        guard case .success(let stdout) = output, case .success = errorOutput else {
            throw Self.failure("\(commandLine.prefix(200)) wrote more than \(outputLimit) bytes, or its output could not be read")
        }
        return Finished(status: exitStatus ?? -1, stdout: stdout, stderr: stderr)
    }
}
