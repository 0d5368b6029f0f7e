package import Foundation
package import PlugboardModel

/// The checks of an endpoint's URL when it is added. Delivery checks again every address a name resolves to, before
/// each connection (``WebhookDelivery``): a name may point anywhere later, so that check is the one that matters.
package enum WebhookAddress {
    /// Checks that `text` is an http(s) URL with a host, and that a host written as an address is a public one unless
    /// `allowPrivate`; link-local addresses (169.254/16, where cloud metadata services answer) and reserved ones
    /// never.
    package static func check(_ text: String, allowPrivate: Bool) throws(BoardError) -> URL {
        guard text.utf8.count <= 2048, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "https" || scheme == "http", var host = url.host, !host.isEmpty, url.user == nil, url.password == nil
        else {
            throw BoardError(
                .invalidInput, "a webhook's URL must be http:// or https:// with a host and no credentials (got \(Validate.escaped(text)))")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let address = NetworkAddress(host) {
            let scope = address.scope
            let refused =
                switch scope {
                case .global: false
                case .loopback, .privateNetwork, .sharedAddressSpace, .uniqueLocal: !allowPrivate
                case .linkLocal, .reserved: true
                }
            if refused {
                throw BoardError(
                    .notAllowed,
                    "the webhook's URL points at \(address) (\(scope.sentence)), which Plugboard does not send to"
                        + (scope == .linkLocal || scope == .reserved ? "" : " unless the server is started with --webhook-allow-private"))
            }
        }
        return url
    }
}

extension AddressScope {
    /// The scope in a few words.
    var sentence: String {
        switch self {
        case .global: "a public address"
        case .loopback: "a loopback address"
        case .privateNetwork: "a private address"
        case .linkLocal: "a link-local address, where cloud metadata services answer"
        case .sharedAddressSpace: "a carrier-grade NAT address"
        case .uniqueLocal: "an IPv6 unique local address"
        case .reserved: "a reserved address"
        }
    }
}
