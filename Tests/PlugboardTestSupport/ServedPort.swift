public import Testing

extension ChildProcess {
    /// Waits until `plugboard serve` says where it listens ("Serving the board at SCHEME://127.0.0.1:PORT …") and
    /// answers PORT. Records a test issue with what the server wrote on stderr when it exits first or never says it.
    public func servedPort(scheme: String = "http", sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        let prefix = "Serving the board at \(scheme)://127.0.0.1:"
        let index = try #require(await waitForLine { $0.hasPrefix(prefix) }, "\(errorOutput)", sourceLocation: sourceLocation)
        let line = output[index]
        return try #require(Int(line.dropFirst(prefix.count).prefix { $0.isNumber }), "\(line)", sourceLocation: sourceLocation)
    }
}
