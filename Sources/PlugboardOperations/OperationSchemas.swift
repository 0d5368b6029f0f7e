/// The schemas of the answers that are not an operation's (refusals, `whoami`, an artifact's upload), in the OpenAPI
/// document's `components.schemas`: the operations' answers are read from their types (``JSONSchema``).
enum OperationSchemas {
    static let yaml = """
            Error:
              type: object
              required: [error, message]
              properties:
                error: {type: string, description: 'The code: invalidInput, notFound, notAllowed, conflict, integrity, io, …'}
                message: {type: string, description: One sentence; further lines are notes.}
            WhoAmI:
              type: object
              required: [principal, token, read_only, address]
              properties:
                principal: {type: string}
                token: {type: string}
                read_only: {type: boolean}
                address: {type: string}
            Upload:
              type: object
              required: [sha256, size]
              properties:
                sha256: {type: string}
                size: {type: integer}


        """
}
