import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations

#if canImport(Glibc)
// Once a dependency loads CoreFoundation, stat() and its fields resolve to its declaration, which must be imported.
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Access tokens kept for servers by `plugboard login`: one JSON file, `plugboard/credentials.json` in the user's
/// config folder (`$XDG_CONFIG_HOME`, else `~/.config`), mode 0600 in a folder of mode 0700.
enum Credentials {
    /// The file.
    static var path: String {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.config")
        return base + "/plugboard/credentials.json"
    }

    /// The most the file may hold.
    static let sizeLimit = 1 << 20

    /// A server's URL as a key: no trailing slash, scheme and host in lower case.
    static func key(_ server: String) -> String {
        var text = server.trimmingCharacters(in: .whitespaces)
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), let scheme = url.scheme, let host = url.host else { return text }
        return "\(scheme.lowercased())://\(host.lowercased())\(url.port.map { ":\($0)" } ?? "")"
    }

    /// Every server's stored token, keyed by ``key(_:)``; empty when there is no file.
    static func load() throws(BoardError) -> [String: String] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
            throw BoardError(
                .notAllowed,
                "\(path) can be read by other users of this machine; run chmod 600 \(path) (or plugboard logout and log in again)")
        }
        let data = try BoundedInput.read(path: path, limit: sizeLimit, what: "credentials file")
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let servers = object["servers"] as? [String: [String: Any]]
        else { throw BoardError(.invalidInput, "\(path) is not a Plugboard credentials file; remove it and log in again") }
        return servers.compactMapValues { $0["token"] as? String }
    }

    /// The token stored for `server`, if any (a damaged or exposed file is reported on stderr and ignored).
    static func token(for server: String) -> String? {
        do { return try load()[key(server)] } catch {
            Output.printWarning(error.message)
            return nil
        }
    }

    /// Writes `servers` to the file: a private temporary file renamed over it.
    static func save(_ servers: [String: String]) throws(BoardError) {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch { throw BoardError(.io, "cannot create \(folder): \(error.localizedDescription)") }
        let object = ["servers": servers.mapValues { ["token": $0] }]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) else {
            throw BoardError(.io, "cannot write the credentials")
        }
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw BoardError(.io, "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let ok = written == data.count && fchmod(fd, 0o600) == 0 && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw BoardError(.io, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// `plugboard login URL`: keeps an access token for a served board, made by signing in with the server's identity
/// provider or given by the person.
struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Keep an access token for a served board, for --server URL and $PLUGBOARD_SERVER.",
        discussion: """
            When the server signs in with an identity provider (serve --oidc-issuer), you sign in with it: in a browser \
            that comes back to this machine, or, with --device or where no browser can open, by entering a code in the \
            console's /ui/device page. The server then makes an access token for you (login-DATE-xxxx, expiring after \
            --expires, 12h by default). Otherwise, or with --with-token, the token (from plugboard access-token create) \
            is read from stdin, or asked for without echo on a terminal. The token is checked with the server and kept \
            in a file only you can read (plugboard/credentials.json in $XDG_CONFIG_HOME, else ~/.config). \
            $PLUGBOARD_TOKEN, when set, is used instead of a kept token.
            """)
    @Argument(help: "The server's URL, for example https://board.example.com:4242.") var url: String
    @Flag(name: .long, help: "Print one JSON document on stdout instead of text.") var json = false
    @Flag(name: .long, help: "Sign in with a code entered in the console, for a machine without a browser.") var device = false
    @Flag(name: .customLong("no-browser"), help: "Print the sign-in address instead of opening a browser.") var noBrowser = false
    @Flag(name: .customLong("with-token"), help: "Read an access token from stdin instead of signing in with the identity provider.")
    var withToken = false
    @Option(name: .long, help: "How long the token of a sign-in lasts: an age such as 12h (the default), 30m or 7d (the most).")
    var expires: String?

    func validate() throws {
        if device && noBrowser { throw ValidationError("--device and --no-browser exclude each other") }
        if withToken && (device || noBrowser || expires != nil) {
            throw ValidationError("--with-token reads a token made elsewhere; --device, --no-browser and --expires are for signing in")
        }
    }

    func run() throws {
        let output = Output(json: json)
        do throws(BoardError) {
            // A server without an identity provider answers the sign-in's routes 404: the token is then given by hand.
            var token = withToken ? nil : try signIn()
            if token == nil { token = try Self.readToken() }
            guard let token else { return }
            let client = try OperationsClient(server: url, token: token)
            let identity = try client.whoami()
            var servers = try Credentials.load()
            servers[Credentials.key(url)] = token
            try Credentials.save(servers)
            let principal = identity["principal"] as? String ?? "?"
            let name = identity["token"] as? String ?? "?"
            let readOnly = identity["read_only"] as? Bool ?? false
            if json {
                output.printJSON(["server": Credentials.key(url), "principal": principal, "token_name": name])
            } else {
                print(
                    "Logged in to \(Validate.escaped(Credentials.key(url))) as \(Validate.escaped(principal)) (token '\(Validate.escaped(name))'\(readOnly ? ", read-only" : "")); the token is kept in \(Credentials.path)."
                )
            }
        } catch {
            output.fail(error)
            throw ExitCode(1)
        }
    }

    /// The token of a sign-in with the server's identity provider; nil when the server has none.
    func signIn() throws(BoardError) -> String? {
        var seconds: Int?
        if let expires {
            guard let value = OperationParse.duration(expires, units: "mhd") else {
                throw BoardError(.invalidInput, "--expires '\(Validate.escaped(expires))' is not an age: use for example 12h, 30m or 7d")
            }
            seconds = Int(value)
        }
        let flow = LoginSignIn(client: try OperationsClient(signingInTo: url), server: url, expiresIn: seconds)
        if device || (!noBrowser && !LoginSignIn.hasBrowser) { return try flow.device() }
        return try flow.loopback(printOnly: noBrowser)
    }

    /// The token from stdin: asked for without echo on a terminal, else the first line.
    static func readToken() throws(BoardError) -> String {
        var line: String?
        if BoundedInput.stdinIsTerminal {
            FileHandle.standardError.write(Data("Access token: ".utf8))
            var settings = termios()
            let hasSettings = tcgetattr(STDIN_FILENO, &settings) == 0
            if hasSettings {
                var quiet = settings
                quiet.c_lflag &= ~tcflag_t(ECHO)
                tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
            }
            defer {
                if hasSettings { tcsetattr(STDIN_FILENO, TCSANOW, &settings) }
                FileHandle.standardError.write(Data("\n".utf8))
            }
            line = try BoundedInput.line(limit: 512, what: "access token")
        } else {
            line = try BoundedInput.line(limit: 512, what: "access token")
        }
        let token = line?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !token.isEmpty else { throw BoardError(.invalidInput, "no access token was given on stdin; nothing was kept") }
        return token
    }
}

/// `plugboard logout URL`: forgets the token kept for a server.
struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout", abstract: "Forget the access token kept for a served board (the token itself stays valid until revoked).")
    @Argument(help: "The server's URL.") var url: String

    func run() throws {
        do throws(BoardError) {
            var servers = try Credentials.load()
            guard servers.removeValue(forKey: Credentials.key(url)) != nil else {
                print("No token is kept for \(Validate.escaped(Credentials.key(url))); nothing changed.")
                return
            }
            try Credentials.save(servers)
            print(
                "Forgot the token kept for \(Validate.escaped(Credentials.key(url))); revoke it with plugboard access-token revoke NAME if it may have leaked."
            )
        } catch {
            Output(json: false).fail(error)
            throw ExitCode(1)
        }
    }
}
