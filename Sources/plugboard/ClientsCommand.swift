import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

/// `plugboard clients`: the applications and SDK instances that read the board through `plugboard serve`.
struct ClientsCommand: RemoteCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "List the applications and SDK instances that read the board through plugboard serve, with their last contact.",
        discussion: """
            Instances silent for more than 30 days are forgotten. With --env, only that environment's. Read from the \
            telemetry file beside the board (<board>.telemetry); a note on stderr says when telemetry was dropped.
            """)
    @OptionGroup var global: GlobalOptions

    func execute(_ output: Output) throws(BoardError) {
        let environment = global.env == nil ? nil : try global.environment()
        let instances = try global.perform(BoardRequests.Clients(env: environment))
        if output.json {
            output.printJSON(instances)
            return
        }
        var table = Table("APPLICATION", "INSTANCE", "ENVIRONMENT", "SDK", "TOKEN", "FIRST SEEN", "LAST SEEN")
        for instance in instances {
            table.add(
                instance.appName, instance.instanceID, instance.environment, instance.sdkVersion.cell, instance.tokenName.cell,
                instance.firstSeen, instance.lastSeen)
        }
        table.print(empty: "No client has contacted plugboard serve yet.")
    }
}
