import Foundation
import Hummingbird
import Logging

/// The peer of `plugboard serve` in Tools/Benchmarks/serve: a bare Hummingbird route answering
/// `GET /api/client/features` with the bytes of a file and its ETag (304 when `If-None-Match` names it), with nothing
/// else: no token check, no board, no metrics, no access log. What `serve` costs above it is Plugboard's own.
///
/// Usage: serve-bare BODY_FILE ETAG. Prints `listening PORT` once it accepts connections on 127.0.0.1.
@main
struct ServeBare {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let body = FileManager.default.contents(atPath: arguments[1]) else {
            FileHandle.standardError.write(Data("usage: serve-bare BODY_FILE ETAG\n".utf8))
            exit(2)
        }
        let etag = arguments[2]
        let buffer = ByteBuffer(bytes: body)
        let router = Router()
        router.get("/api/client/features") { request, _ -> Response in
            if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: [.eTag: etag]) }
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8", .eTag: etag],
                body: ResponseBody(byteBuffer: buffer))
        }
        var logger = Logger(label: "serve-bare")
        logger.logLevel = .error
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                FileHandle.standardOutput.write(Data("listening \(channel.localAddress?.port ?? 0)\n".utf8))
            }, logger: logger)
        try await app.runService()
    }
}
