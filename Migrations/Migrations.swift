/// One schema migration compiled into the binary from `Migrations/NNNN_name.sql`.
public struct EmbeddedMigration: Sendable, Hashable {
    /// The file name, for example `0001_registry.sql`. The part before the first `_` is the version.
    public let fileName: String
    /// The SQL text exactly as it is in the file.
    public let sql: String

    /// Creates a migration; the code generator calls this for each `.sql` file.
    public init(fileName: String, sql: String) {
        self.fileName = fileName
        self.sql = sql
    }
}

/// The namespace of the migrations compiled into this binary (see `embedded` and `support`, generated at build time).
public enum MigrationCatalog {}
