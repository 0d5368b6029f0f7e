import Logging

/// `serve`'s log handler: swift-log's `StreamLogHandler` on standard error, with the logger's metadata kept as it is
/// set and made into text only when a line is written. `StreamLogHandler` formats its metadata again at every change,
/// and the server's router sets a request's id on its logger for every request, logged or not.
struct ServeLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String, level: Logger.Level) {
        stream = StreamLogHandler.standardError(label: label)
        stream.logLevel = level
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        let merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        event.metadata = merged.isEmpty ? nil : merged
        stream.log(event: event)
    }
}
