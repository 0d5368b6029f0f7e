/// The schemas of what admin operations answer, in the OpenAPI document's `components.schemas` (YAML, indented for
/// it). Properties that may be absent are not listed as required: the CLI's JSON leaves out what is not set.
enum AdminSchemas {
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
            ChangeResult:
              type: object
              required: [changed, message, notes]
              properties:
                changed: {type: boolean, description: False when the board already was in the requested state.}
                message: {type: string}
                notes: {type: array, items: {type: string}}
            PluginSummaryList:
              type: array
              items:
                type: object
                required: [id, name, environment, enabled, killed, version_count]
                properties:
                  id: {type: string}
                  name: {type: string}
                  environment: {type: string}
                  enabled: {type: boolean}
                  killed: {type: boolean}
                  pinned_version: {type: string}
                  latest_version: {type: string}
                  active_version: {type: string}
                  version_count: {type: integer}
            PluginDetail:
              type: object
              required: [id, name, created_at, created_by, versions, environments, owners, kill_switches]
              properties:
                id: {type: string}
                name: {type: string}
                description: {type: string}
                created_at: {type: string}
                created_by: {type: string}
                versions:
                  type: array
                  items:
                    type: object
                    required: [version, name, capabilities, dependencies, registered_at, registered_by, killed, manifest, signature]
                    properties:
                      version: {type: string}
                      name: {type: string}
                      description: {type: string}
                      host_range: {type: string}
                      gate: {type: string}
                      entry: {type: string}
                      capabilities: {type: array, items: {type: string}}
                      dependencies: {type: object, additionalProperties: {type: string}}
                      artifact_sha256: {type: string}
                      registered_at: {type: string}
                      registered_by: {type: string}
                      yanked_at: {type: string}
                      yanked_by: {type: string}
                      yank_reason: {type: string}
                      killed: {type: boolean}
                      manifest: {type: string}
                      signature: {type: object}
                environments:
                  type: array
                  items:
                    type: object
                    required: [environment, enabled]
                    properties:
                      environment: {type: string}
                      enabled: {type: boolean}
                      pinned_version: {type: string}
                      active_version: {type: string}
                owners: {$ref: '#/components/schemas/OwnerList'}
                kill_switches:
                  type: array
                  items: {$ref: '#/components/schemas/KillSwitch'}
            KillSwitch:
              type: object
              required: [id, scope, reason, killed_at, killed_by]
              properties:
                id: {type: integer}
                scope: {type: string, enum: [all, plugin, version]}
                plugin_id: {type: string}
                version: {type: string}
                reason: {type: string}
                killed_at: {type: string}
                killed_by: {type: string}
                revived_at: {type: string}
                revived_by: {type: string}
                revive_reason: {type: string}
            OwnerList:
              type: array
              items:
                type: object
                required: [principal, role, added_at, added_by]
                properties:
                  principal: {type: string}
                  role: {type: string, enum: [owner, maintainer]}
                  added_at: {type: string}
                  added_by: {type: string}
            LoadStatusList:
              type: array
              items:
                type: object
                required: [host_id, environment, host_version, plugin_id, state, reported_at]
                properties:
                  host_id: {type: string}
                  environment: {type: string}
                  host_version: {type: string}
                  source: {type: string}
                  plugin_id: {type: string}
                  version: {type: string}
                  state: {type: string}
                  reason_code: {type: string}
                  reason: {type: string}
                  warning: {type: string}
                  signature: {type: string}
                  reported_at: {type: string}
                  crashes: {type: integer, description: Crashes of this version on the host within its crash window.}
            FlagSummaryList:
              type: array
              items:
                type: object
                required: [name, type, owner, environment, enabled, strategy_count, variant_count, archived, potentially_stale, created_at, updated_at]
                properties:
                  name: {type: string}
                  type: {type: string}
                  description: {type: string}
                  owner: {type: string}
                  environment: {type: string}
                  enabled: {type: boolean}
                  strategy_count: {type: integer}
                  variant_count: {type: integer}
                  archived: {type: boolean}
                  potentially_stale: {type: boolean}
                  created_at: {type: string}
                  updated_at: {type: string}
            FlagDetail:
              type: object
              required: [name, type, owner, impression_data, dependencies, created_at, created_by, updated_at, potentially_stale, environments, usage]
              properties:
                name: {type: string}
                type: {type: string}
                description: {type: string}
                owner: {type: string}
                impression_data: {type: boolean}
                dependencies: {type: array, items: {type: object}}
                created_at: {type: string}
                created_by: {type: string}
                updated_at: {type: string}
                archived_at: {type: string}
                potentially_stale: {type: boolean}
                environments:
                  type: array
                  items:
                    type: object
                    required: [environment, enabled, strategies, variants]
                    properties:
                      environment: {type: string}
                      enabled: {type: boolean}
                      strategies: {type: array, items: {type: object}}
                      variants: {type: array, items: {type: object}}
                usage:
                  type: array
                  items:
                    type: object
                    required: [environment, 'yes', 'no', variants]
                    properties:
                      environment: {type: string}
                      last_seen: {type: string}
                      'yes': {type: integer}
                      'no': {type: integer}
                      variants: {type: object, additionalProperties: {type: integer}}
            UnleashFeatures:
              type: object
              description: Unleash's client-API features document (its own camelCase keys).
              required: [version, features]
              properties:
                version: {type: integer}
                features: {type: array, items: {type: object}}
                segments: {type: array, items: {type: object}}
            AdminList:
              type: array
              items:
                type: object
                required: [principal, added_at, added_by]
                properties:
                  principal: {type: string}
                  added_at: {type: string}
                  added_by: {type: string}
            PolicyList:
              type: array
              items:
                type: object
                required: [environment, signatures]
                properties:
                  environment: {type: string}
                  signatures: {type: string, enum: ['off', warn, require]}
                  updated_at: {type: string}
                  updated_by: {type: string}
            SignerList:
              type: array
              items:
                type: object
                required: [key_id, plugin_id, public_key, added_at, added_by]
                properties:
                  key_id: {type: string}
                  plugin_id: {type: string, description: 'The plug-in, or * for every plug-in.'}
                  public_key: {type: string}
                  name: {type: string}
                  added_at: {type: string}
                  added_by: {type: string}
                  revoked_at: {type: string}
                  revoked_by: {type: string}
                  revoke_reason: {type: string}
            CreatedToken:
              type: object
              required: [name, environment, kind, token]
              properties:
                name: {type: string}
                environment: {type: string}
                kind: {type: string, enum: [sdk, hosts]}
                token: {type: string, description: The secret, shown this once.}
                expires_at: {type: string}
            TokenList:
              type: array
              items:
                type: object
                required: [name, environment, kind, prefix, created_at, created_by, state]
                properties:
                  name: {type: string}
                  environment: {type: string}
                  kind: {type: string, enum: [sdk, hosts, sdk+hosts]}
                  prefix: {type: string}
                  created_at: {type: string}
                  created_by: {type: string}
                  expires_at: {type: string}
                  revoked_at: {type: string}
                  revoked_by: {type: string}
                  revoke_reason: {type: string}
                  last_used_at: {type: string}
                  state: {type: string, enum: [active, expired, revoked]}
            CreatedAccessToken:
              type: object
              required: [name, principal, token, read_only]
              properties:
                name: {type: string}
                principal: {type: string}
                token: {type: string, description: The secret, shown this once.}
                read_only: {type: boolean}
                expires_at: {type: string}
            AccessTokenList:
              type: array
              items:
                type: object
                required: [principal, name, prefix, read_only, created_at, created_by, state]
                properties:
                  principal: {type: string}
                  name: {type: string}
                  prefix: {type: string}
                  read_only: {type: boolean}
                  created_at: {type: string}
                  created_by: {type: string}
                  expires_at: {type: string}
                  revoked_at: {type: string}
                  revoked_by: {type: string}
                  revoke_reason: {type: string}
                  last_used_at: {type: string}
                  state: {type: string, enum: [active, expired, revoked]}
            NameList:
              type: array
              items: {type: string}
            ClientList:
              type: array
              items:
                type: object
                required: [app_name, instance_id, environment, first_seen, last_seen]
                properties:
                  app_name: {type: string}
                  instance_id: {type: string}
                  environment: {type: string}
                  sdk_version: {type: string}
                  token_name: {type: string}
                  first_seen: {type: string}
                  last_seen: {type: string}
            AuditCheckpoint:
              type: object
              required: [seq, hash]
              properties:
                seq: {type: integer}
                hash: {type: string}
                state_root: {type: string}
            AuditVerification:
              type: object
              required: [ok, rows_checked, problems, state_rows_checked]
              properties:
                ok: {type: boolean}
                rows_checked: {type: integer}
                head: {$ref: '#/components/schemas/AuditCheckpoint'}
                first_bad_seq: {type: integer}
                problems: {type: array, items: {type: string}}
                state_rows_checked: {type: integer}
                state_root: {type: string}
            AuditPage:
              type: object
              required: [records]
              properties:
                next_after: {type: integer, description: The after of the next page; absent on the last.}
                records:
                  type: array
                  items:
                    type: object
                    required: [seq, at, actor, action, outcome, target_type, prev_hash, hash]
                    properties:
                      seq: {type: integer}
                      at: {type: string}
                      actor: {type: string}
                      on_behalf_of: {type: string}
                      via: {type: string}
                      action: {type: string}
                      outcome: {type: string, enum: [ok, refused]}
                      target_type: {type: string}
                      target_id: {type: string}
                      environment: {type: string}
                      reason: {type: string}
                      before_json: {type: string}
                      after_json: {type: string}
                      prev_hash: {type: string}
                      hash: {type: string}
                      state_changes: {type: string}
                      state_root: {type: string}
            SecretList:
              type: array
              items:
                type: object
                required: [plugin_id, key, data_key_version, data_key_state, readable, updated_at]
                properties:
                  plugin_id: {type: string}
                  key: {type: string}
                  data_key_version: {type: integer}
                  data_key_state: {type: string}
                  readable: {type: boolean}
                  updated_at: {type: string}
            Upload:
              type: object
              required: [sha256, size]
              properties:
                sha256: {type: string}
                size: {type: integer}

        """
}
