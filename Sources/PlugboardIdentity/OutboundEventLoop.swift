import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An event loop of its own for an ``OutboundHTTP``'s connections, on one thread in the background
/// (``BackgroundPriority``): the network work of sending (writes, reads, the answers' parsing) then takes the
/// processor only when the server's own event loops, which answer requests at the process's priority, and the board's
/// writers leave it free, and is given a share of it when it has waited longer than ``BackgroundPriority/patience``.
///
/// Whoever makes one shuts it down with ``shutdown()`` once every ``OutboundConnections`` on it is closed.
package final class OutboundEventLoop: Sendable {
    /// The group of one thread the connections run on.
    let group: MultiThreadedEventLoopGroup
    private let priority: BackgroundPriority
    /// When the probe in flight was sent, and whether the loop ran it.
    private let probe = Mutex<(sent: ContinuousClock.Instant, ran: Bool)?>(nil)

    private init(group: MultiThreadedEventLoopGroup, priority: BackgroundPriority) {
        self.group = group
        self.priority = priority
    }

    /// A new event loop whose thread runs in the background.
    package static func background() async -> OutboundEventLoop {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The priority is set on the loop's own thread, before any connection runs there.
        let priority = try! await group.next().submit { BackgroundPriority.ofCurrentThread() }.get()
        return OutboundEventLoop(group: group, priority: priority)
    }

    /// Called every ``BackgroundPriority/patience`` by whoever uses the loop: sends the loop a probe, and gives its
    /// thread a share of the processor when the probe sent before has not run.
    package func watch() {
        let now = ContinuousClock.now
        let send = probe.withLock { probe -> Bool in
            if let sent = probe, !sent.ran {
                priority.observe(waitingSince: sent.sent, now: now)
                return false
            }
            priority.observe(waitingSince: nil, now: now)
            probe = (now, false)
            return true
        }
        if send { group.next().execute { self.probe.withLock { $0?.ran = true } } }
    }

    /// Ends the loop's thread; a connection still open on it is closed.
    package func shutdown() async {
        try? await group.shutdownGracefully()
    }
}
