package import PlugboardModel
package import PlugboardStore

/// What operators tell one host: the requests behind `plugboard host …`.
package enum HostRequests {
    /// `host release-quarantine HOST ID VERSION`: the host loads a release it quarantined for crashing it again.
    package struct ReleaseQuarantine: RoutedRequest {
        /// The host id, as the host reports it.
        package var hostID: String
        /// The plug-in id.
        package var id: String
        package var version: String
        package var reason: String?
        package init(hostID: String, id: String, version: String, reason: String?) {
            self.hostID = hostID
            self.id = id
            self.version = version
            self.reason = reason
        }
        package static let route = AdminRoute(
            "host.release-quarantine", .post, "/quarantine-releases", .write,
            summary: "End one host's quarantine of a release that crashed it: the host loads the release again.",
            parameters: [
                AdminParameter("host_id", .body, required: true, "The host id, as the host reports it."),
                AdminParameter("id", .body, required: true, "The plug-in id."),
                AdminParameter("version", .body, required: true, "The version the host quarantined."),
                AdminParameter("reason", .body, "Why."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.pluginID(id)
            let parsed = try AdminParse.version(version)
            if let reason { try Validate.reason(reason) }
            return AdminReply(try board.releaseQuarantine(hostID: hostID, pluginID: id, version: parsed, reason: reason, by: actor))
        }
    }
}
