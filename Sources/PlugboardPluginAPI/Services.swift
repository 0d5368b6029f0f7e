import Synchronization

/// Host-defined services, looked up by type: the host registers `any Clock`, `any HTTPClient`, … and a plug-in
/// asks for them. The service protocol must be declared in a module that host and plug-ins both link
/// dynamically, so that both see the same type.
public final class ServiceRegistry: Sendable {
    private let services: Mutex<[ObjectIdentifier: any Sendable]>

    /// Creates an empty registry.
    public init() { services = Mutex([:]) }

    /// Registers `service` under `type` (usually a protocol), replacing any earlier one.
    public func register<T>(_ type: T.Type, _ service: T) where T: Sendable {
        services.withLock { $0[ObjectIdentifier(type)] = service }
    }

    /// The service registered under `type`, if any.
    public func service<T>(_ type: T.Type) -> T? {
        services.withLock { $0[ObjectIdentifier(type)] as? T }
    }

    /// The service registered under `type`, or an error that names the type.
    public func require<T>(_ type: T.Type) throws -> T {
        guard let service = service(type) else { throw ServiceNotFound(typeName: String(describing: type)) }
        return service
    }
}

/// No service of the requested type is registered with the host.
public struct ServiceNotFound: Error, Sendable, CustomStringConvertible {
    /// The type asked for.
    public let typeName: String
    public var description: String { "the host offers no service of type \(typeName)" }
}
