import ArgumentParser
import PlugboardOperations

/// `plugboard rollout …`: a release reaches an environment's hosts in steps, under a guard that stops it by itself.
struct RolloutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollout", abstract: "Roll a release out to hosts in steps, guarded by their failure rate.",
        discussion: """
            A rollout lets a cohort of the environment's hosts run the new release while the others stay on the release \
            they ran. Each host decides its cohort from a stable hash of its id. Steps widen the cohort on schedule \
            (plugboard serve advances them; plugboard rollout tick does on a board nobody serves) while the guard holds: \
            when more than --max-failure-rate of at least --min-hosts hosts that loaded the release failed to activate \
            it, crashed or quarantined it, the guard aborts the rollout and every host returns to the previous release. \
            Once a plug-in is released by rollouts in an environment, its later releases there wait for a rollout of \
            their own (roll out the running release with --steps 100 to begin).
            """,
        subcommands: commands(RolloutOperations.all))
}
