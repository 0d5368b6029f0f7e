import NIOCore

/// One server-sent event as the streams write it (`event:`, optional `id:`, one `data:` line, a blank line): the
/// Unleash delta stream and the hosts' stream both frame their messages here. The data is JSON and never holds a line
/// break, so one `data:` line carries it whole.
enum ServerSentEvent {
    /// The bytes of one event.
    static func frame(_ event: String, id: Int? = nil, data: String) -> ByteBuffer {
        var text = "event: \(event)\n"
        if let id { text += "id: \(id)\n" }
        text += "data: \(data)\n\n"
        return ByteBuffer(string: text)
    }
}
