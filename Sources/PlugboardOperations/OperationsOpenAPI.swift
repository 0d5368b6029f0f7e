import Foundation

/// The operations API's OpenAPI 3.1 document, made from ``OperationsAPI/requests`` (paths, parameters, bodies) and
/// ``OperationSchemas`` (what the operations answer): the server routes the same table, so the two cannot drift apart.
/// The repository keeps a copy (`docs/admin-openapi.yaml`, checked by the tests); `serve --admin` serves it at
/// `/api/admin/openapi.yaml`.
package enum OperationsOpenAPI {
    /// The document, as YAML.
    package static func document() -> String {
        var out = """
            openapi: 3.1.0
            info:
              title: Plugboard operations API
              version: 1.0.0
              description: >-
                Every read and write the plugboard CLI offers on a board, served by plugboard serve --admin: each
                operation is POST /{operation} with the CLI's arguments and options as one JSON object. Answers are
                the JSON the CLI prints with --json; refusals are {"error": CODE, "message": SENTENCE} with the CLI's
                codes and sentences. Authenticate with an access token (plugboard access-token create) as
                Authorization: Bearer TOKEN; a read-only token may only perform the operations that read (those
                whose description does not say they need a token that is not read-only). Failed authentications
                past a limit (per client address and from all clients) get 429 with Retry-After; an accepted token is
                never refused for them. A body larger than the server's usual limit (1 MiB by default) is read only
                for board admins and the owners and maintainers of plug-ins (403 before it is read otherwise), at most
                2 at a time per principal, from all of their tokens (429), and within the server's budget (503).
            servers:
              - url: /api/admin
            security:
              - accessToken: []
            paths:

            """
        out += "  /whoami:\n"
        out += operation(
            method: "get", name: "whoami", summary: "Who the access token acts as.", parameters: [], response: "WhoAmI", access: .read)
        out += """
              /artifacts/{sha256}:
                put:
                  operationId: artifact.upload
                  summary: Upload an artifact for the plugin register that names it; kept only when its SHA-256 matches.
                  tags: [plugin]
                  description: >-
                    Needs an access token that is not read-only (403 before the body is read otherwise): anyone who may
                    register a new plug-in uploads its artifact. Streamed; at most the server's artifact limit (512 MiB
                    by default). Uploads waiting for their registration have quotas, checked before the body is read:
                    per principal (4, or 1 for a principal who holds no role on the board, and 2 GiB by default; 429)
                    and in all (64, 8 GiB; 507), and an upload leaves 1 GiB of the disk free (507).
                  parameters:
                    - name: sha256
                      in: path
                      required: true
                      description: The artifact's SHA-256, 64 lower-case hex digits.
                      schema: {type: string, pattern: '^[0-9a-f]{64}$'}
                  requestBody:
                    required: true
                    content:
                      application/octet-stream:
                        schema: {type: string, format: binary}
                  responses:
                    '200':
                      description: The artifact was kept.
                      content:
                        application/json:
                          schema:
                            $ref: '#/components/schemas/Upload'
                    default:
                      $ref: '#/components/responses/Refusal'

            """
        out += """
              /backup:
                get:
                  operationId: backup
                  summary: A verified backup of the board (board admins), as plugboard backup takes it.
                  tags: [backup]
                  description: >-
                    The body is the backup file (SQLite). The Plugboard-Backup header describes it (JSON, percent-encoded
                    where not printable ASCII): board, seq, hash, state_root, size, time, sha256, not_in_backup.
                  responses:
                    '200':
                      description: The backup file.
                      content:
                        application/vnd.sqlite3:
                          schema: {type: string, format: binary}
                    default:
                      $ref: '#/components/responses/Refusal'

            """
        for type in OperationsAPI.requests {
            out += "  /\(type.name):\n"
            out += operation(
                method: "post", name: type.name, summary: type.summary, discussion: type.discussion, parameters: type.parameters,
                response: type.responseSchema, access: type.access, widens: type.declaration.widens != .never)
        }
        out += """
            components:
              securitySchemes:
                accessToken:
                  type: http
                  scheme: bearer
                  description: An access token from plugboard access-token create (pba_…).
              responses:
                Refusal:
                  description: The request was refused; nothing changed.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'
              schemas:

            """
        out += OperationSchemas.yaml
        var named: Set<String> = []
        for type in OperationsAPI.requests where named.insert(type.responseSchema).inserted {
            out += "    \(type.responseSchema):\n" + type.responseJSONSchema.yaml(indent: 6)
        }
        return out
    }

    private static func operation(
        method: String, name: String, summary: String, discussion: String = "", parameters: [OperationParameter], response: String,
        access: OperationAccess, widens: Bool = false
    ) -> String {
        var out = "    \(method):\n"
        out += "      operationId: \(name)\n"
        out += "      summary: \(quoted(summary))\n"
        out += "      tags: [\(name.split(separator: ".").first.map(String.init) ?? name)]\n"
        let rights: String
        switch access {
        case .read: rights = ""
        case .write: rights = "Needs an access token that is not read-only."
        case .stop: rights = "Needs an access token that is not read-only; served in the lane of stops."
        }
        let description = [discussion, rights].filter { !$0.isEmpty }.joined(separator: " ")
        if !description.isEmpty { out += "      description: \(quoted(description))\n" }
        let body = parameters
        if widens {
            out += "      parameters:\n"
            out += "        - name: \(OperationsWire.changeAtHeader)\n"
            out += "          in: header\n"
            out += "          required: false\n"
            out += "          description: 'Where it waits for approvals: apply it at this time (ISO-8601) once approved.'\n"
            out += "          schema: {type: string}\n"
            out += "        - name: \(OperationsWire.emergencyHeader)\n"
            out += "          in: header\n"
            out += "          required: false\n"
            out +=
                "          description: 'Where it waits for approvals: apply it at once as an audited emergency (admins), for this reason.'\n"
            out += "          schema: {type: string}\n"
        }
        if method == "post" {
            out += "      requestBody:\n"
            out += "        required: true\n"
            out += "        content:\n"
            out += "          application/json:\n"
            out += "            schema:\n"
            out += "              type: object\n"
            let required = body.filter(\.required).map(\.name)
            if !required.isEmpty { out += "              required: [\(required.joined(separator: ", "))]\n" }
            out += body.isEmpty ? "              properties: {}\n" : "              properties:\n"
            for parameter in body {
                out += "                \(parameter.name):\n"
                out += "                  description: \(quoted(parameter.summary))\n"
                for line in schemaLines(parameter.kind) { out += "                  \(line)\n" }
            }
        }
        out += "      responses:\n"
        out += "        '200':\n"
        out += "          description: \(quoted(summary))\n"
        out += "          content:\n"
        out += "            application/json:\n"
        out += "              schema:\n"
        out += "                $ref: '#/components/schemas/\(response)'\n"
        if widens {
            out += "        '202':\n"
            out += "          description: 'It waits for approvals: the change request it opened (or applied as an emergency).'\n"
            out += "          headers:\n"
            out += "            \(OperationsWire.changeRequestHeader):\n"
            out += "              description: The change request's number.\n"
            out += "              schema: {type: integer}\n"
            out += "          content:\n"
            out += "            application/json:\n"
            out += "              schema:\n"
            out += "                $ref: '#/components/schemas/ChangeRequestResult'\n"
        }
        out += "        default:\n"
        out += "          $ref: '#/components/responses/Refusal'\n"
        return out
    }

    private static func schemaLines(_ kind: OperationParameter.Kind) -> [String] {
        switch kind {
        case .string: ["type: string"]
        case .integer: ["type: integer"]
        case .boolean: ["type: boolean"]
        case .stringArray: ["type: array", "items: {type: string}"]
        case .object: ["type: object"]
        }
    }

    /// A YAML string in single quotes.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
