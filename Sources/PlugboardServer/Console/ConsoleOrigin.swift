import Foundation
import HTTPTypes
import Hummingbird

/// A web origin: scheme, host and port (the port written out even when it is the scheme's default).
struct ConsoleOrigin: Equatable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    /// The origin of a URL or of an `Origin` header (`https://board.example.com:8443`); nil for `null` or anything
    /// that is not an http(s) URL with a host.
    init?(_ text: String) {
        guard text.utf8.count <= 2048, let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// The origin of a request's authority (`Host`) under `scheme`.
    init?(scheme: String, authority: String) {
        self.init("\(scheme)://\(authority)")
    }

    var description: String {
        let host = self.host.contains(":") ? "[\(host)]" : host
        return port == (scheme == "https" ? 443 : 80) ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }
}

extension ConsoleRoutes {
    /// The console's origin as the browser that sent `request` sees it: the scheme (https with TLS, or what a proxy
    /// in front says in `X-Forwarded-Proto`) and the host and port the request was sent to (`X-Forwarded-Host` when a
    /// proxy sets it, else `Host`). A page cannot set either forwarded header on a form it makes a browser send.
    static func ownOrigin(_ request: Request, secure: Bool) -> ConsoleOrigin? {
        let forwardedProto = request.headers[.xForwardedProto].map { String($0.prefix { $0 != "," }).trimmingCharacters(in: .whitespaces) }
        let forwardedHost = request.headers[.xForwardedHost].map { String($0.prefix { $0 != "," }).trimmingCharacters(in: .whitespaces) }
        let scheme = forwardedProto.map { $0.lowercased() } ?? (secure ? "https" : "http")
        guard let authority = forwardedHost ?? request.head.authority else { return nil }
        return ConsoleOrigin(scheme: scheme, authority: authority)
    }

    /// Why a sign-in is not the console's own page's, as a sentence; nil when it is. Its `Origin` must be the console's
    /// origin (scheme, host and port: a page on another port of the same host is another origin); without `Origin`, its
    /// `Referer` must be a page of that origin; a sign-in with neither is refused, since a browser's form sends them.
    static func foreignSignIn(_ request: Request, secure: Bool) -> String? {
        guard let own = ownOrigin(request, secure: secure) else {
            return "a sign-in must name the console's host (the request has no Host header)"
        }
        let claimed: String
        if let origin = request.headers[.origin] {
            claimed = origin
        } else if let referer = request.headers[.referer] {
            claimed = referer
        } else {
            return
                "a sign-in must say which page it comes from (Origin or Referer, as browsers send); sign in from the console's page at \(own)/ui/sign-in"
        }
        guard let origin = ConsoleOrigin(claimed), origin == own else {
            let shown = ConsoleOrigin(claimed)?.description ?? "'\(String(claimed.prefix(80)))'"
            return "a sign-in must come from the console's own page at \(own), not from \(shown)"
        }
        return nil
    }
}

extension HTTPField.Name {
    /// Set by a proxy in front of the server: the scheme the client used.
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    /// Set by a proxy in front of the server: the host (and port) the client sent its request to.
    static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!
}
