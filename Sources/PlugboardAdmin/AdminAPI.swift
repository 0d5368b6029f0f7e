/// Every operation of the admin API, in the order the OpenAPI document lists them.
package enum AdminAPI {
    package static let requests: [any AdminRequest.Type] =
        [
            PluginRequests.List.self, PluginRequests.Show.self, PluginRequests.Status.self,
        ] + PluginRequests.lifecycle.map { $0 as any AdminRequest.Type } + HostRequests.all.map { $0 as any AdminRequest.Type } + [
            RolloutRequests.Start.self, RolloutRequests.Status.self, RolloutRequests.Hold.self, RolloutRequests.Abort.self,
            RolloutRequests.Tick.self,
            TrustRequests.AddSignature.self,
            AccessRequests.Owners.self, AccessRequests.SetOwner.self, AccessRequests.Admins.self, AccessRequests.SetAdmin.self,
        ] + FlagRequests.all.map { $0 as any AdminRequest.Type } + [
            TrustRequests.Policies.self, TrustRequests.SetPolicy.self, TrustRequests.Signers.self, TrustRequests.AddSigner.self,
            TrustRequests.RevokeSigner.self, TokenRequests.List.self, TokenRequests.Create.self, TokenRequests.Revoke.self,
            TokenRequests.ListAccess.self, TokenRequests.CreateAccess.self, TokenRequests.RevokeAccess.self,
            BoardRequests.Environments.self, BoardRequests.Clients.self, BoardRequests.Audit.self, BoardRequests.Verify.self,
            BoardRequests.Checkpoint.self,
        ] + SecretRequests.all.map { $0 as any AdminRequest.Type } + [
            PluginRequests.Register.self
        ]
}
