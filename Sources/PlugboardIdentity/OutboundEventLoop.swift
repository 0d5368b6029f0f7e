import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An event loop of its own for an ``OutboundHTTP``'s connections, on one thread at a lower scheduling priority
/// (`nice`): the network work of sending (writes, reads, the answers' parsing) then takes the processor only when the
/// server's own event loops, which answer requests at the process's priority, and the board's writers leave it free.
///
/// Whoever makes one shuts it down with ``shutdown()`` once every ``OutboundConnections`` on it is closed.
package final class OutboundEventLoop: Sendable {
    /// The group of one thread the connections run on.
    let group: MultiThreadedEventLoopGroup

    private init(group: MultiThreadedEventLoopGroup) {
        self.group = group
    }

    /// A new event loop whose thread runs at `niceness` above the process's (Linux sets it per thread; elsewhere the
    /// thread runs at the process's priority).
    package static func lowPriority(niceness: Int32 = 10) async -> OutboundEventLoop {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The priority is set on the loop's own thread, before any connection runs there.
        try? await group.next().submit { lowerCurrentThreadPriority(by: niceness) }.get()
        return OutboundEventLoop(group: group)
    }

    /// Ends the loop's thread; a connection still open on it is closed.
    package func shutdown() async {
        try? await group.shutdownGracefully()
    }
}

/// Lowers the calling thread's scheduling priority by `niceness` (on Linux, where a nice value is a thread's own and
/// `who` 0 is the calling thread; elsewhere it does nothing).
package func lowerCurrentThreadPriority(by niceness: Int32) {
    #if os(Linux)
    let which = __priority_which_t(PRIO_PROCESS.rawValue)
    _ = setpriority(which, 0, getpriority(which, 0) + niceness)
    #endif
}
