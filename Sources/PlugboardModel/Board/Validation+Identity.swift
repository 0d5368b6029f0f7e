extension Validate {
    /// An identity provider's issuer: an `https://` URL (or `http://` for a provider on loopback, in tests), at most 512
    /// printable ASCII characters without spaces, compared exactly as the provider's discovery document says it.
    public static func issuer(_ issuer: String) throws(BoardError) {
        guard issuer.utf8.count <= 512, issuer.hasPrefix("https://") || issuer.hasPrefix("http://"),
            issuer.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw .invalid(
                "'\(printable(String(issuer.prefix(80))))' is not an issuer: give the identity provider's issuer URL exactly as its discovery document says it (https://…)"
            )
        }
    }

    /// An account's subject at an identity provider (its `sub` claim): 1-255 printable ASCII characters without spaces.
    public static func subject(_ subject: String) throws(BoardError) {
        guard !subject.isEmpty, subject.utf8.count <= 255, subject.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw .invalid("a subject is 1-255 printable ASCII characters without spaces, as the identity provider's sub claim")
        }
    }

    /// A group as an identity provider's groups claim names it: 1-256 characters of one line.
    public static func providerGroup(_ group: String) throws(BoardError) {
        guard !group.isEmpty, group.utf8.count <= 256, !group.unicodeScalars.contains(where: isUnsafe) else {
            throw .invalid("a group is 1-256 characters of one line, as the identity provider's groups claim names it")
        }
    }
}
