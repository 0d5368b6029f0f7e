public import Foundation

/// A message between plug-ins: a topic, who sent it, and a payload.
public struct PluginEvent: Sendable, Hashable {
    /// The topic, for example `calendar.synced`.
    public let topic: String
    /// The id of the plug-in (or `host`) that published it.
    public let sender: String
    /// The payload, usually JSON.
    public let payload: Data

    /// Creates an event.
    public init(topic: String, sender: String, payload: Data) {
        self.topic = topic
        self.sender = sender
        self.payload = payload
    }
}

/// Publish/subscribe between plug-ins. The host binds the sender, so a plug-in cannot publish as another.
public protocol EventBus: Sendable {
    /// Publishes an event on `topic` to current subscribers.
    func publish(_ topic: String, payload: Data)
    /// Subscribes to `topic`; the stream ends when the subscriber's plug-in is deactivated.
    func subscribe(_ topic: String) -> AsyncStream<PluginEvent>
}

extension EventBus {
    /// Publishes an `Encodable` payload as JSON.
    public func publish<T: Encodable>(_ topic: String, _ value: T) throws {
        publish(topic, payload: try JSONEncoder().encode(value))
    }
}
