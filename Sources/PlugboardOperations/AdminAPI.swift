/// Every operation of the operations API, in the order the OpenAPI document lists them.
package enum AdminAPI {
    package static let requests: [any AdminRequest.Type] =
        PluginOperations.reads.map { $0 as any AdminRequest.Type } + PluginOperations.lifecycle.map { $0 as any AdminRequest.Type }
        + HostOperations.all.map { $0 as any AdminRequest.Type } + RolloutOperations.all.map { $0 as any AdminRequest.Type } + [
            TrustOperations.AddSignature.self
        ] + (RoleOperations.owners + RoleOperations.admins).map { $0 as any AdminRequest.Type }
        + FlagRequests.all.map { $0 as any AdminRequest.Type }
        + (TrustOperations.policies + TrustOperations.signers + TokenOperations.apiTokens + TokenOperations.accessTokens).map {
            $0 as any AdminRequest.Type
        } + BoardOperations.all.map { $0 as any AdminRequest.Type } + SecretRequests.all.map { $0 as any AdminRequest.Type } + [
            PluginOperations.Register.self
        ]
}
