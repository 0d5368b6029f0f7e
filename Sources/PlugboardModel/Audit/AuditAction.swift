/// The action of an audit log row: one word of Plugboard's audit vocabulary (`plugin.kill`, `change.apply`).
///
/// Every row the board writes names one of these; a value is made only here, so a misspelt action does not compile.
/// An operation's declaration names its action (`OperationDeclaration`), and the store's audited change for it writes
/// that same value; `audit verify`'s replay of the approvals and a restore's narrowings match on these values. Rows
/// already stored keep their text, which is the action's ``name``.
public struct AuditAction: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The action as the audit log stores it (`plugin.kill`).
    public let name: String

    private init(_ name: String) { self.name = name }

    /// The action whose stored text is `name`, or nil when the vocabulary has none such (a row of a newer Plugboard).
    public init?(stored name: String) {
        guard let action = Self.byName[name] else { return nil }
        self = action
    }

    /// The stored text.
    public var description: String { name }

    /// Orders by name.
    public static func < (lhs: AuditAction, rhs: AuditAction) -> Bool { lhs.name < rhs.name }

    /// Every action of the vocabulary, in name order.
    public static let all: [AuditAction] = [
        .accessTokenCreate, .accessTokenList, .accessTokenRevoke, .adminAdd, .adminList, .adminRemove, .advisoryFeedApply,
        .advisoryFeedList, .advisoryFeedSubscribe, .advisoryFeedUnsubscribe, .advisoryExposure, .advisoryImport, .advisoryList,
        .advisorySetAction, .advisoryShow, .advisoryWithdraw, .approverAdd, .approverList,
        .approverRevoke, .artifactUpload, .audit, .auditAppend, .auditCheckpoint, .auditVerify, .boardBackup, .boardBaseline, .boardInit,
        .boardMigrate, .boardRestore, .changeAcknowledge, .changeApply, .changeApplyDue, .changeApprove, .changeCancel, .changeEmergency,
        .changeList, .changeOpen, .changeRefused, .changeReject, .changeSchedule, .changeShow, .clients, .envList, .environmentCreate,
        .flagArchive, .flagCreate, .flagDisable, .flagEnable, .flagExport, .flagImport, .flagList, .flagRollout, .flagShow, .flagUnarchive,
        .groupAdd, .groupList, .groupRemove, .hostReleaseQuarantine, .keysInit, .keysRotateDataKey, .keysRotateMaster, .keysShred,
        .ownerAdd, .ownerList, .ownerRemove, .pluginAddSignature, .pluginDisable, .pluginEnable, .pluginKill, .pluginList, .pluginPin,
        .pluginRegister, .pluginRevive, .pluginShow, .pluginSign, .pluginStatus, .pluginUnpin, .pluginUnyank, .pluginYank, .policyApprovals,
        .policySet, .policyShow, .principalIdentities, .principalLink, .principalUnlink, .restoreCarriedForward, .rolloutAbort,
        .rolloutPause, .rolloutResume, .rolloutStart, .rolloutStatus,
        .rolloutStep, .rolloutTick, .secretDelete, .secretGet, .secretList, .secretSet, .secretWrite, .segmentImport, .signerAdd,
        .signerList, .signerRevoke, .ssoGrant, .ssoGroups, .ssoMapGroup, .ssoRevoke, .ssoSignIn, .ssoUnmapGroup, .tokenCreate, .tokenList,
        .tokenRevoke, .webhookAdd, .webhookDisable, .webhookEnable, .webhookList, .webhookRemove, .webhookReplay,
        .webhookRotateSecret, .webhookShow, .webhookTest, .whoami,
    ]

    /// `actions`' names as one JSON array, for SQL to expand with `json_each` (`action IN (SELECT value FROM json_each(?))`).
    public static func jsonList(_ actions: [AuditAction]) -> String {
        "[" + actions.map { "\"\($0.name)\"" }.joined(separator: ",") + "]"
    }

    private static let byName: [String: AuditAction] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}

extension AuditAction {
    // MARK: access-token
    /// `access-token.create`.
    public static let accessTokenCreate = AuditAction("access-token.create")
    /// `access-token.list`.
    public static let accessTokenList = AuditAction("access-token.list")
    /// `access-token.revoke`.
    public static let accessTokenRevoke = AuditAction("access-token.revoke")
    // MARK: admin
    /// `admin.add`.
    public static let adminAdd = AuditAction("admin.add")
    /// `admin.list`.
    public static let adminList = AuditAction("admin.list")
    /// `admin.remove`.
    public static let adminRemove = AuditAction("admin.remove")
    // MARK: advisory-feed
    /// `advisory-feed.apply`: a subscribed feed taken in, its head recorded.
    public static let advisoryFeedApply = AuditAction("advisory-feed.apply")
    /// `advisory-feed.list`.
    public static let advisoryFeedList = AuditAction("advisory-feed.list")
    /// `advisory-feed.subscribe`.
    public static let advisoryFeedSubscribe = AuditAction("advisory-feed.subscribe")
    /// `advisory-feed.unsubscribe`.
    public static let advisoryFeedUnsubscribe = AuditAction("advisory-feed.unsubscribe")
    // MARK: advisory
    /// `advisory.exposure`.
    public static let advisoryExposure = AuditAction("advisory.exposure")
    /// `advisory.import`.
    public static let advisoryImport = AuditAction("advisory.import")
    /// `advisory.list`.
    public static let advisoryList = AuditAction("advisory.list")
    /// `advisory.set-action`.
    public static let advisorySetAction = AuditAction("advisory.set-action")
    /// `advisory.show`.
    public static let advisoryShow = AuditAction("advisory.show")
    /// `advisory.withdraw`.
    public static let advisoryWithdraw = AuditAction("advisory.withdraw")
    // MARK: approver
    /// `approver.add`.
    public static let approverAdd = AuditAction("approver.add")
    /// `approver.list`.
    public static let approverList = AuditAction("approver.list")
    /// `approver.revoke`.
    public static let approverRevoke = AuditAction("approver.revoke")
    // MARK: artifact
    /// `artifact.upload`.
    public static let artifactUpload = AuditAction("artifact.upload")
    // MARK: audit
    /// `audit`.
    public static let audit = AuditAction("audit")
    /// `audit.append`.
    public static let auditAppend = AuditAction("audit.append")
    /// `audit.checkpoint`.
    public static let auditCheckpoint = AuditAction("audit.checkpoint")
    /// `audit.verify`.
    public static let auditVerify = AuditAction("audit.verify")
    // MARK: board
    /// `board.backup`.
    public static let boardBackup = AuditAction("board.backup")
    /// `board.baseline`.
    public static let boardBaseline = AuditAction("board.baseline")
    /// `board.init`.
    public static let boardInit = AuditAction("board.init")
    /// `board.migrate`.
    public static let boardMigrate = AuditAction("board.migrate")
    /// `board.restore`.
    public static let boardRestore = AuditAction("board.restore")
    // MARK: change
    /// `change.acknowledge`.
    public static let changeAcknowledge = AuditAction("change.acknowledge")
    /// `change.apply`.
    public static let changeApply = AuditAction("change.apply")
    /// `change.apply-due`.
    public static let changeApplyDue = AuditAction("change.apply-due")
    /// `change.approve`.
    public static let changeApprove = AuditAction("change.approve")
    /// `change.cancel`.
    public static let changeCancel = AuditAction("change.cancel")
    /// `change.emergency`.
    public static let changeEmergency = AuditAction("change.emergency")
    /// `change.list`.
    public static let changeList = AuditAction("change.list")
    /// `change.open`.
    public static let changeOpen = AuditAction("change.open")
    /// `change.refused`.
    public static let changeRefused = AuditAction("change.refused")
    /// `change.reject`.
    public static let changeReject = AuditAction("change.reject")
    /// `change.schedule`.
    public static let changeSchedule = AuditAction("change.schedule")
    /// `change.show`.
    public static let changeShow = AuditAction("change.show")
    // MARK: clients
    /// `clients`.
    public static let clients = AuditAction("clients")
    // MARK: env
    /// `env.list`.
    public static let envList = AuditAction("env.list")
    // MARK: environment
    /// `environment.create`.
    public static let environmentCreate = AuditAction("environment.create")
    // MARK: flag
    /// `flag.archive`.
    public static let flagArchive = AuditAction("flag.archive")
    /// `flag.create`.
    public static let flagCreate = AuditAction("flag.create")
    /// `flag.disable`.
    public static let flagDisable = AuditAction("flag.disable")
    /// `flag.enable`.
    public static let flagEnable = AuditAction("flag.enable")
    /// `flag.export`.
    public static let flagExport = AuditAction("flag.export")
    /// `flag.import`.
    public static let flagImport = AuditAction("flag.import")
    /// `flag.list`.
    public static let flagList = AuditAction("flag.list")
    /// `flag.rollout`.
    public static let flagRollout = AuditAction("flag.rollout")
    /// `flag.show`.
    public static let flagShow = AuditAction("flag.show")
    /// `flag.unarchive`.
    public static let flagUnarchive = AuditAction("flag.unarchive")
    // MARK: group
    /// `group.add`.
    public static let groupAdd = AuditAction("group.add")
    /// `group.list`.
    public static let groupList = AuditAction("group.list")
    /// `group.remove`.
    public static let groupRemove = AuditAction("group.remove")
    // MARK: host
    /// `host.release-quarantine`.
    public static let hostReleaseQuarantine = AuditAction("host.release-quarantine")
    // MARK: keys
    /// `keys.init`.
    public static let keysInit = AuditAction("keys.init")
    /// `keys.rotate_data_key`.
    public static let keysRotateDataKey = AuditAction("keys.rotate_data_key")
    /// `keys.rotate_master`.
    public static let keysRotateMaster = AuditAction("keys.rotate_master")
    /// `keys.shred`.
    public static let keysShred = AuditAction("keys.shred")
    // MARK: owner
    /// `owner.add`.
    public static let ownerAdd = AuditAction("owner.add")
    /// `owner.list`.
    public static let ownerList = AuditAction("owner.list")
    /// `owner.remove`.
    public static let ownerRemove = AuditAction("owner.remove")
    // MARK: plugin
    /// `plugin.add-signature`.
    public static let pluginAddSignature = AuditAction("plugin.add-signature")
    /// `plugin.disable`.
    public static let pluginDisable = AuditAction("plugin.disable")
    /// `plugin.enable`.
    public static let pluginEnable = AuditAction("plugin.enable")
    /// `plugin.kill`.
    public static let pluginKill = AuditAction("plugin.kill")
    /// `plugin.list`.
    public static let pluginList = AuditAction("plugin.list")
    /// `plugin.pin`.
    public static let pluginPin = AuditAction("plugin.pin")
    /// `plugin.register`.
    public static let pluginRegister = AuditAction("plugin.register")
    /// `plugin.revive`.
    public static let pluginRevive = AuditAction("plugin.revive")
    /// `plugin.show`.
    public static let pluginShow = AuditAction("plugin.show")
    /// `plugin.sign`.
    public static let pluginSign = AuditAction("plugin.sign")
    /// `plugin.status`.
    public static let pluginStatus = AuditAction("plugin.status")
    /// `plugin.unpin`.
    public static let pluginUnpin = AuditAction("plugin.unpin")
    /// `plugin.unyank`.
    public static let pluginUnyank = AuditAction("plugin.unyank")
    /// `plugin.yank`.
    public static let pluginYank = AuditAction("plugin.yank")
    // MARK: policy
    /// `policy.approvals`.
    public static let policyApprovals = AuditAction("policy.approvals")
    /// `policy.set`.
    public static let policySet = AuditAction("policy.set")
    /// `policy.show`.
    public static let policyShow = AuditAction("policy.show")
    // MARK: restore
    /// `restore.carried-forward`.
    public static let restoreCarriedForward = AuditAction("restore.carried-forward")
    // MARK: rollout
    /// `rollout.abort`.
    public static let rolloutAbort = AuditAction("rollout.abort")
    /// `rollout.pause`.
    public static let rolloutPause = AuditAction("rollout.pause")
    /// `rollout.resume`.
    public static let rolloutResume = AuditAction("rollout.resume")
    /// `rollout.start`.
    public static let rolloutStart = AuditAction("rollout.start")
    /// `rollout.status`.
    public static let rolloutStatus = AuditAction("rollout.status")
    /// `rollout.step`.
    public static let rolloutStep = AuditAction("rollout.step")
    /// `rollout.tick`.
    public static let rolloutTick = AuditAction("rollout.tick")
    // MARK: secret
    /// `secret.delete`.
    public static let secretDelete = AuditAction("secret.delete")
    /// `secret.get`.
    public static let secretGet = AuditAction("secret.get")
    /// `secret.list`.
    public static let secretList = AuditAction("secret.list")
    /// `secret.set`.
    public static let secretSet = AuditAction("secret.set")
    /// `secret.write`.
    public static let secretWrite = AuditAction("secret.write")
    // MARK: segment
    /// `segment.import`.
    public static let segmentImport = AuditAction("segment.import")
    // MARK: signer
    /// `signer.add`.
    public static let signerAdd = AuditAction("signer.add")
    /// `signer.list`.
    public static let signerList = AuditAction("signer.list")
    /// `signer.revoke`.
    public static let signerRevoke = AuditAction("signer.revoke")
    // MARK: token
    /// `token.create`.
    public static let tokenCreate = AuditAction("token.create")
    /// `token.list`.
    public static let tokenList = AuditAction("token.list")
    /// `token.revoke`.
    public static let tokenRevoke = AuditAction("token.revoke")
    // MARK: whoami
    /// `whoami`.
    public static let whoami = AuditAction("whoami")
    // MARK: principal
    /// `principal.identities`.
    public static let principalIdentities = AuditAction("principal.identities")
    /// `principal.link`.
    public static let principalLink = AuditAction("principal.link")
    /// `principal.unlink`.
    public static let principalUnlink = AuditAction("principal.unlink")
    // MARK: sso
    /// `sso.grant`: a sign-in gave a role its groups map to.
    public static let ssoGrant = AuditAction("sso.grant")
    /// `sso.groups`.
    public static let ssoGroups = AuditAction("sso.groups")
    /// `sso.map-group`.
    public static let ssoMapGroup = AuditAction("sso.map-group")
    /// `sso.revoke`: a sign-in took back a role no group of the person maps to any more.
    public static let ssoRevoke = AuditAction("sso.revoke")
    /// `sso.sign-in`: the first sign-in of an identity, which made its principal.
    public static let ssoSignIn = AuditAction("sso.sign-in")
    /// `sso.unmap-group`.
    public static let ssoUnmapGroup = AuditAction("sso.unmap-group")
    // MARK: webhook
    /// `webhook.add`.
    public static let webhookAdd = AuditAction("webhook.add")
    /// `webhook.disable`: by an admin, or by delivery when the endpoint answered 410 Gone.
    public static let webhookDisable = AuditAction("webhook.disable")
    /// `webhook.enable`.
    public static let webhookEnable = AuditAction("webhook.enable")
    /// `webhook.list`.
    public static let webhookList = AuditAction("webhook.list")
    /// `webhook.remove`.
    public static let webhookRemove = AuditAction("webhook.remove")
    /// `webhook.replay`: the endpoint's cursor moved back, so that it receives events again.
    public static let webhookReplay = AuditAction("webhook.replay")
    /// `webhook.rotate-secret`.
    public static let webhookRotateSecret = AuditAction("webhook.rotate-secret")
    /// `webhook.show`.
    public static let webhookShow = AuditAction("webhook.show")
    /// `webhook.test`: a test event sent to the endpoint.
    public static let webhookTest = AuditAction("webhook.test")
}
