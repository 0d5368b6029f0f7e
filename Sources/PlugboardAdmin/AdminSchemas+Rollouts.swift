extension AdminSchemas {
    /// The schemas of what rollout operations answer (`rollout status`, `rollout tick`).
    static let rolloutYAML = """
            RolloutFigures: {type: object, required: [version, hosts, activated, failed, crashed, quarantined, failing, failure_rate], properties: {version: {type: string}, hosts: {type: integer}, activated: {type: integer}, failed: {type: integer}, crashed: {type: integer}, quarantined: {type: integer}, failing: {type: integer}, failure_rate: {type: number}}}
            RolloutStatusList:
              type: array
              items:
                type: object
                required: [rollout, every_seconds, max_failure_rate, min_hosts, step_started_at, started_at, started_by, history, current, hosts_by_version]
                properties:
                  rollout:
                    type: object
                    required: [plugin_id, environment, version, steps, step, state]
                    properties:
                      plugin_id: {type: string}
                      environment: {type: string}
                      version: {type: string}
                      previous: {type: string}
                      steps: {type: array, items: {type: integer}}
                      step: {type: integer}
                      state: {type: string, enum: [running, paused, completed, aborted]}
                  every_seconds: {type: integer}
                  max_failure_rate: {type: number}
                  min_hosts: {type: integer}
                  step_started_at: {type: string}
                  next_step_at: {type: string}
                  started_at: {type: string}
                  started_by: {type: string}
                  ended_at: {type: string}
                  ended_by: {type: string}
                  end_reason: {type: string}
                  history:
                    type: array
                    items:
                      type: object
                      required: [percent, reached_at, by]
                      properties:
                        percent: {type: integer}
                        reached_at: {type: string}
                        by: {type: string}
                        figures: {$ref: '#/components/schemas/RolloutFigures'}
                        previous_figures: {$ref: '#/components/schemas/RolloutFigures'}
                  current: {$ref: '#/components/schemas/RolloutFigures'}
                  previous: {$ref: '#/components/schemas/RolloutFigures'}
                  hosts_by_version: {type: object, additionalProperties: {type: integer}}
            RolloutTickList:
              type: array
              items:
                type: object
                required: [plugin_id, environment, version, action, message]
                properties:
                  plugin_id: {type: string}
                  environment: {type: string}
                  version: {type: string}
                  action: {type: string, enum: [aborted, stepped, completed]}
                  message: {type: string}
        """
}
