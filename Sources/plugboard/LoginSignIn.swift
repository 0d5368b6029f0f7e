import Crypto
import Foundation
import PlugboardModel
import PlugboardOperations

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `plugboard login URL` with the server's identity provider, brokered by the server (its `/api/login/` routes): in a
/// browser that comes back to a loopback address of this machine (RFC 8252 style, with PKCE), or with a code the
/// person confirms in the console (RFC 8628 style). The server makes the person's access token; this only receives it.
struct LoginSignIn {
    let client: OperationsClient
    let server: String
    /// The token's lifetime in seconds; nil for the server's default (12 hours).
    let expiresIn: Int?

    /// How long the person has to sign in.
    static let patience: TimeInterval = 600

    /// The URL of `path` on the server.
    func endpoint(_ path: String) -> String {
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// Posts `object` to `path`: nil when the server has no identity provider (404), else the answer's status and JSON.
    func post(_ path: String, _ object: [String: Any]) throws(BoardError) -> (status: Int, body: [String: Any])? {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        let answer = try client.exchange(method: "POST", url: endpoint(path), body: data)
        guard answer.status != 404 else { return nil }
        let body = (try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]) ?? [:]
        return (answer.status, body)
    }

    /// The server's sentence of a refusal, escaped for the terminal.
    static func refusal(_ body: [String: Any], status: Int) -> BoardError {
        let message = (body["message"] as? String).map { Validate.escaped($0) } ?? "the server answered HTTP \(status)"
        return BoardError(.notAllowed, message)
    }

    /// The access token of an answer that gives one.
    static func token(_ answer: (status: Int, body: [String: Any])) throws(BoardError) -> String {
        guard answer.status == 200, let token = answer.body["access_token"] as? String, !token.isEmpty else {
            throw refusal(answer.body, status: answer.status)
        }
        return token
    }

    // MARK: Loopback

    /// Signs in in a browser: opened with `xdg-open` (or `open`), or with `printOnly` the URL printed for the person to
    /// open. Returns the token, or nil when the server has no identity provider.
    func loopback(printOnly: Bool) throws(BoardError) -> String? {
        let listener = try LoopbackListener()
        defer { listener.close() }
        let verifier = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) }).base64URL
        let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64URL
        var request: [String: Any] = ["redirect": "http://127.0.0.1:\(listener.port)/plugboard-login", "code_challenge": challenge]
        if let expiresIn { request["expires_in"] = expiresIn }
        guard let begun = try post("/api/login/begin", request) else { return nil }
        guard begun.status == 200, let url = begun.body["url"] as? String else { throw Self.refusal(begun.body, status: begun.status) }
        if printOnly || !Self.openBrowser(url) {
            Self.say("Open this address in a browser to sign in (within 10 minutes):\n  \(url)")
        } else {
            Self.say("Opened a browser to sign in; if none appeared, open this address:\n  \(url)")
        }
        let deadline = Date().addingTimeInterval(Self.patience)
        while true {
            let callback = try listener.next(until: deadline)
            if let error = callback.query["error"] {
                callback.reply(status: 400, "The sign-in failed: \(error). Return to your terminal.")
                throw BoardError(.notAllowed, "the sign-in failed in the browser (\(Validate.escaped(String(error.prefix(100)))))")
            }
            guard callback.path == "/plugboard-login", let code = callback.query["code"] else {
                callback.reply(status: 404, "Not the sign-in of plugboard login.")
                continue
            }
            do throws(BoardError) {
                guard let finished = try post("/api/login/finish", ["code": code, "code_verifier": verifier]) else {
                    throw BoardError(.notFound, "the server no longer offers sign-in with an identity provider")
                }
                let token = try Self.token(finished)
                let principal = finished.body["principal"] as? String ?? "you"
                callback.reply(status: 200, "Signed in to Plugboard as \(principal). You can close this tab and return to your terminal.")
                return token
            } catch {
                callback.reply(status: 400, "The sign-in failed: \(error.message) Return to your terminal.")
                throw error
            }
        }
    }

    /// Opens `url` in the person's browser; false when it cannot.
    static func openBrowser(_ url: String) -> Bool {
        #if canImport(Darwin)
        let opener = "/usr/bin/open"
        #else
        let opener = "/usr/bin/xdg-open"
        #endif
        guard FileManager.default.isExecutableFile(atPath: opener) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [url]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Whether this session can show a browser: a display, or `$BROWSER`.
    static var hasBrowser: Bool {
        #if canImport(Darwin)
        return true
        #else
        let environment = ProcessInfo.processInfo.environment
        return ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"].contains { !(environment[$0] ?? "").isEmpty }
        #endif
    }

    // MARK: Device

    /// Signs in with a code the person confirms in the console. Returns the token, or nil when the server has no
    /// identity provider.
    func device() throws(BoardError) -> String? {
        var request: [String: Any] = [:]
        if let expiresIn { request["expires_in"] = expiresIn }
        guard let begun = try post("/api/login/device", request) else { return nil }
        guard begun.status == 200, let deviceCode = begun.body["device_code"] as? String, let userCode = begun.body["user_code"] as? String,
            let uri = begun.body["verification_uri"] as? String
        else { throw Self.refusal(begun.body, status: begun.status) }
        var interval = max(1, begun.body["interval"] as? Int ?? 5)
        Self.say(
            "To sign in, open \(Validate.escaped(uri)) in a browser, sign in to the console, and enter the code \(Validate.escaped(userCode)) (within 10 minutes)."
        )
        let deadline = Date().addingTimeInterval(Double(begun.body["expires_in"] as? Int ?? 600))
        while Date() < deadline {
            Thread.sleep(forTimeInterval: Double(interval))
            guard let answer = try post("/api/login/device/token", ["device_code": deviceCode]) else {
                throw BoardError(.notFound, "the server no longer offers sign-in with an identity provider")
            }
            if answer.status == 200 { return try Self.token(answer) }
            switch answer.body["error"] as? String {
            case "authorization_pending": continue
            case "slow_down": interval += 5
            default: throw Self.refusal(answer.body, status: answer.status)
            }
        }
        throw BoardError(.notAllowed, "the code was not approved within 10 minutes; run plugboard login again")
    }

    /// A line for the person, on stderr (stdout is the result's).
    static func say(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

extension Data {
    /// Base64url without padding.
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
