package import PlugboardStore

/// Every operation of the operations API, in the order the OpenAPI document lists them.
package enum OperationsAPI {
    package static let requests: [any OperationRequest.Type] = {
        let groups: [[any ParsedOperation.Type]] = [
            PluginOperations.reads, PluginOperations.lifecycle, HostOperations.all, RolloutOperations.all,
            [TrustOperations.AddSignature.self], RoleOperations.owners, RoleOperations.admins, RoleOperations.groups,
            IdentityOperations.principals, IdentityOperations.sso, WebhookOperations.all, AdvisoryOperations.all,
            AdvisoryFeedOperations.all,
            FlagOperations.all,
            TrustOperations.policies, TrustOperations.signers, ApproverOperations.all, TokenOperations.apiTokens,
            TokenOperations.accessTokens,
            BoardOperations.all, SecretOperations.all, ChangeOperations.all,
        ]
        var requests: [any OperationRequest.Type] = []
        for group in groups {
            for operation in group { requests.append(operation) }
        }
        requests.append(PluginOperations.Register.self)
        return requests
    }()

    /// The operations that start or widen what runs, by the action of their audit rows: what `audit verify` holds to
    /// the approval policies.
    package static let wideningActions = WideningActions(
        Dictionary(
            uniqueKeysWithValues: requests.compactMap { type in
                type.declaration.widens == .never ? nil : (type.declaration.action, type.declaration.widens == .boardWide)
            }))
}
