public import Foundation
import Synchronization

/// An in-process ``EventBus``: the host's default, and a fake for plug-in tests.
///
/// Each plug-in gets a view bound to its id with ``bound(to:)``, so the sender of an event is always the
/// plug-in that published it. ``published`` records every event, for assertions.
public final class InMemoryEventBus: Sendable {
    private struct Subscriber {
        let owner: String
        let topic: String
        let continuation: AsyncStream<PluginEvent>.Continuation
    }

    private let subscribers = Mutex<[UUID: Subscriber]>([:])
    private let log = Mutex<[PluginEvent]>([])

    /// Creates an empty bus.
    public init() {}

    /// Every event published so far, in order.
    public var published: [PluginEvent] { log.withLock { $0 } }

    /// A view of the bus for one plug-in (or `host`): events it publishes carry its id as sender.
    public func bound(to sender: String) -> any EventBus { BoundEventBus(bus: self, sender: sender) }

    /// Publishes an event from `sender` to the subscribers of its topic.
    public func publish(_ topic: String, payload: Data, from sender: String) {
        let event = PluginEvent(topic: topic, sender: sender, payload: payload)
        log.withLock { $0.append(event) }
        let targets = subscribers.withLock { $0.values.filter { $0.topic == topic }.map(\.continuation) }
        for continuation in targets { continuation.yield(event) }
    }

    /// Subscribes `owner` to `topic`.
    public func subscribe(_ topic: String, owner: String) -> AsyncStream<PluginEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<PluginEvent>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        subscribers.withLock { $0[id] = Subscriber(owner: owner, topic: topic, continuation: continuation) }
        return stream
    }

    /// Ends every subscription of `owner` (the host calls this when it deactivates a plug-in).
    public func endSubscriptions(of owner: String) {
        let ended = subscribers.withLock { subscribers in
            let ids = subscribers.filter { $0.value.owner == owner }.map(\.key)
            return ids.compactMap { subscribers.removeValue(forKey: $0)?.continuation }
        }
        for continuation in ended { continuation.finish() }
    }
}

private struct BoundEventBus: EventBus {
    let bus: InMemoryEventBus
    let sender: String

    func publish(_ topic: String, payload: Data) { bus.publish(topic, payload: payload, from: sender) }
    func subscribe(_ topic: String) -> AsyncStream<PluginEvent> { bus.subscribe(topic, owner: sender) }
}
