import Foundation
import PlugboardVersioning

/// Turns a ``FeatureSet`` into compiled flags, collecting validation errors and warnings on the way.
///
/// One pass serves both purposes so that what validation refuses and what lenient evaluation does can never
/// drift apart: every error states, in code, how the lenient snapshot treats the definition.
struct FlagCompiler {
    struct Output {
        var flags: [CompiledFlag] = []
        var index: [String: Int] = [:]
        var errors: [FlagValidationProblem] = []
        var warnings: [FlagValidationProblem] = []
    }

    /// How a problem affects lenient evaluation.
    enum Effect {
        /// The whole flag is off (Unleash's engine fails to compile it).
        case breaksFlag
        /// Only the local element is affected (false constraint, skipped value, never-matching strategy).
        case local
    }

    private var output = Output()
    private var subject: FlagValidationSubject = .featureSet
    private var flagBroken = false
    private var segmentConstraints: [Int: (constraints: [CompiledConstraint], breaks: Bool)] = [:]

    static func compile(_ set: FeatureSet) -> Output {
        var compiler = FlagCompiler()
        compiler.run(set)
        return compiler.output
    }

    mutating func error(_ field: String, _ message: String, _ effect: Effect) {
        output.errors.append(FlagValidationProblem(.error, subject: subject, field: field, message: message))
        if case .breaksFlag = effect { flagBroken = true }
    }

    mutating func warning(_ field: String, _ message: String) {
        output.warnings.append(FlagValidationProblem(.warning, subject: subject, field: field, message: message))
    }

    private mutating func run(_ set: FeatureSet) {
        // Segments first: their constraints are shared by every strategy that names them.
        var users: [Int: [String]] = [:]
        for feature in set.features {
            for strategy in feature.strategies ?? [] {
                for id in Set(strategy.segments ?? []) { users[id, default: []].append(feature.name) }
            }
        }
        var seenSegments = Set<Int>()
        for (position, segment) in (set.segments ?? []).enumerated() {
            subject = .segment(id: segment.id, usedBy: users[segment.id] ?? [])
            if !seenSegments.insert(segment.id).inserted {
                subject = .featureSet
                error("segment \(position + 1) id", "segment id \(segment.id) is defined more than once", .local)
                continue
            }
            flagBroken = false
            var compiled: [CompiledConstraint] = []
            for (offset, constraint) in segment.constraints.enumerated() {
                if let result = compileConstraint(constraint, field: "constraint \(offset + 1)") { compiled.append(result) }
            }
            segmentConstraints[segment.id] = (compiled, flagBroken)
        }

        // Flag names, so dependencies can point at indices.
        for (position, feature) in set.features.enumerated() {
            if feature.name.isEmpty {
                subject = .featureSet
                error("features[\(position)] name", "a flag name must not be empty", .local)
            }
            if output.index[feature.name] != nil {
                subject = .flag(feature.name)
                error("name", "the flag name is defined more than once (features[\(position)])", .local)
            }
            // Unleash keeps the last definition of a name.
            output.index[feature.name] = position
        }

        for feature in set.features {
            output.flags.append(compileFlag(feature, in: set))
        }
        checkDependencyCycles(set)
    }

    private mutating func compileFlag(_ feature: FeatureFlag, in set: FeatureSet) -> CompiledFlag {
        subject = .flag(feature.name)
        flagBroken = false
        var strategies: [CompiledStrategy] = []
        for (offset, strategy) in (feature.strategies ?? []).enumerated() {
            strategies.append(compileStrategy(strategy, field: "strategy \(offset + 1)", flagName: feature.name))
        }
        let variants = compileFeatureVariants(feature.variants ?? [], flagName: feature.name)
        var dependencies: [CompiledDependency] = []
        for (offset, dependency) in (feature.dependencies ?? []).enumerated() {
            let field = "dependency \(offset + 1)"
            let parent = output.index[dependency.feature]
            if parent == nil {
                warning(field, "flag '\(dependency.feature)' does not exist, so this flag is always off")
            } else if let parent, !(set.features[parent].dependencies ?? []).isEmpty, dependency.feature != feature.name {
                warning(
                    field,
                    "flag '\(dependency.feature)' has dependencies itself; Unleash does not follow transitive dependencies, so this flag is always off"
                )
            }
            dependencies.append(
                CompiledDependency(parent: parent, expectEnabled: dependency.enabled ?? true, variants: dependency.variants))
        }
        return CompiledFlag(
            name: feature.name, enabled: feature.enabled, broken: flagBroken, strategies: strategies,
            variants: variants, dependencies: dependencies)
    }

    private mutating func checkDependencyCycles(_ set: FeatureSet) {
        // Depth-first search over parent edges; report each cycle once, on the flag where it is first closed.
        var state = [Int](repeating: 0, count: set.features.count)  // 0 new, 1 on stack, 2 done
        var reported = Set<Set<String>>()
        func visit(_ node: Int, _ stack: inout [Int], _ compiler: inout FlagCompiler) {
            state[node] = 1
            stack.append(node)
            for dependency in set.features[node].dependencies ?? [] {
                guard let parent = compiler.output.index[dependency.feature] else { continue }
                if state[parent] == 1, let start = stack.firstIndex(of: parent) {
                    let names = stack[start...].map { set.features[$0].name }
                    if reported.insert(Set(names)).inserted {
                        compiler.subject = .flag(set.features[node].name)
                        let path = (names + [dependency.feature]).map { "'\($0)'" }.joined(separator: " → ")
                        compiler.error("dependencies", "dependency cycle \(path)", .local)
                    }
                } else if state[parent] == 0 {
                    visit(parent, &stack, &compiler)
                }
            }
            stack.removeLast()
            state[node] = 2
        }
        for node in set.features.indices where state[node] == 0 {
            var stack: [Int] = []
            visit(node, &stack, &self)
        }
    }

    // MARK: Strategies

    private mutating func compileStrategy(_ strategy: Strategy, field: String, flagName: String) -> CompiledStrategy {
        let parameters = strategy.parameters ?? [:]
        let rule: StrategyRule
        switch strategy.name {
        case "default":
            rule = .always
        case "userWithId":
            if let ids = parameters["userIds"] {
                rule = .userIds(
                    ExactStringSet(
                        ids.split(separator: ",", omittingEmptySubsequences: false).map {
                            String($0).trimmingCharacters(in: .whitespacesAndNewlines)
                        }))
            } else {
                error("\(field) parameter 'userIds'", "the userWithId strategy needs a 'userIds' parameter", .local)
                rule = .never
            }
        case "flexibleRollout":
            let stickiness = rolloutStickiness(parameters["stickiness"], field: field)
            let groupId = parameters["groupId"]
            checkGroupId(groupId, field: field)
            if let percent = percentage(parameters["rollout"], name: "rollout", field: field) {
                rule = .rollout(percent: percent, stickiness: stickiness, groupId: groupId)
            } else {
                rule = .never
            }
        case "gradualRolloutUserId", "gradualRolloutSessionId":
            let field0: ContextField = strategy.name == "gradualRolloutUserId" ? .userId : .sessionId
            let percent = percentage(parameters["percentage"], name: "percentage", field: field)
            let groupId = parameters["groupId"]
            checkGroupId(groupId, field: field)
            if groupId == nil {
                warning("\(field) parameter 'groupId'", "the \(strategy.name) strategy has no 'groupId', so it never matches")
            }
            if let percent, let groupId {
                rule = .rollout(percent: percent, stickiness: [.field(field0)], groupId: groupId)
            } else {
                rule = .never
            }
        case "gradualRolloutRandom":
            if let text = parameters["percentage"], let value = UnleashNumber.parsePercentage(text) {
                if value > 100 { warning("\(field) parameter 'percentage'", "'\(text)' is above 100, so the strategy always matches") }
                rule = .random(percent: value)
            } else {
                let text =
                    parameters["percentage"].map { "'\($0)' is not a whole number from 0 to 100" }
                    ?? "the gradualRolloutRandom strategy needs a 'percentage' parameter"
                error("\(field) parameter 'percentage'", text, .local)
                rule = .never
            }
        case "remoteAddress":
            if let list = parameters["IPs"] {
                var networks: [IPNetwork] = []
                for entry in list.split(separator: ",", omittingEmptySubsequences: false) {
                    let trimmed = String(entry).trimmingCharacters(in: .whitespacesAndNewlines)
                    if let network = IPNetwork(trimmed) {
                        networks.append(network)
                    } else {
                        error("\(field) parameter 'IPs'", "'\(trimmed)' is not an IP address or CIDR range", .local)
                    }
                }
                rule = .remoteAddress(networks)
            } else {
                error("\(field) parameter 'IPs'", "the remoteAddress strategy needs an 'IPs' parameter", .local)
                rule = .never
            }
        case "applicationHostname":
            let names = parameters["hostNames"] ?? ""
            if parameters["hostNames"] == nil {
                warning("\(field) parameter 'hostNames'", "the applicationHostname strategy has no 'hostNames', so it never matches")
            }
            rule = .hostname(
                Set(
                    names.split(separator: ",", omittingEmptySubsequences: false).map {
                        String($0).trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
                    }))
        default:
            warning(
                "\(field) name", "'\(strategy.name)' is not a built-in strategy; custom strategies are not supported, so it never matches")
            rule = .never
        }

        var constraints: [CompiledConstraint] = []
        for (offset, constraint) in (strategy.constraints ?? []).enumerated() {
            if let compiled = compileConstraint(constraint, field: "\(field) constraint \(offset + 1)") { constraints.append(compiled) }
        }
        for (offset, id) in (strategy.segments ?? []).enumerated() {
            if let segment = segmentConstraints[id] {
                constraints += segment.constraints
                if segment.breaks { flagBroken = true }
            } else {
                error("\(field) segment \(offset + 1)", "segment id \(id) does not exist", .breaksFlag)
            }
        }

        var variants: CompiledVariants?
        if let list = strategy.variants, !list.isEmpty {
            let stickinessName = parameters["stickiness"] ?? "default"
            variants = compileVariants(
                list.map { (name: $0.name, weight: $0.weight, payload: $0.payload, overrides: [VariantOverride]()) },
                stickiness: stickinessName, groupId: parameters["groupId"] ?? flagName, field: field)
        }
        let isTargeted = !(strategy.constraints ?? []).isEmpty || !(strategy.segments ?? []).isEmpty
        return CompiledStrategy(rule: rule, constraints: constraints, variants: variants, isTargeted: isTargeted)
    }

    private mutating func percentage(_ text: String?, name: String, field: String) -> UInt32? {
        guard let text else {
            error("\(field) parameter '\(name)'", "the strategy needs a '\(name)' parameter (a whole number from 0 to 100)", .local)
            return nil
        }
        guard let value = UnleashNumber.parsePercentage(text) else {
            error("\(field) parameter '\(name)'", "'\(text)' is not a whole number from 0 to 100", .local)
            return nil
        }
        guard value <= 100 else {
            error("\(field) parameter '\(name)'", "'\(text)' is above 100", .breaksFlag)
            return nil
        }
        return UInt32(value)
    }

    private mutating func checkGroupId(_ groupId: String?, field: String) {
        if let groupId, groupId.contains("\"") {
            error("\(field) parameter 'groupId'", "'\(groupId)' contains a double quote, which Unleash cannot evaluate", .breaksFlag)
        }
    }

    private mutating func rolloutStickiness(_ name: String?, field: String) -> [StickinessSource] {
        switch name {
        case nil, "default": return [.field(.userId), .field(.sessionId), .random]
        case "random": return [.random]
        case let name?:
            if name.isEmpty { warning("\(field) parameter 'stickiness'", "an empty stickiness never matches") }
            return [.field(ContextField(constraintName: name))]
        }
    }

    // MARK: Variants

    private mutating func compileFeatureVariants(_ list: [FeatureVariant], flagName: String) -> CompiledVariants? {
        guard !list.isEmpty else { return nil }
        for (offset, variant) in list.enumerated() {
            for (position, override) in (variant.overrides ?? []).enumerated() where override.values.isEmpty {
                warning("variant \(offset + 1) override \(position + 1)", "the override for '\(override.contextName)' has no values")
            }
        }
        return compileVariants(
            list.map { (name: $0.name, weight: $0.weight, payload: $0.payload, overrides: $0.overrides ?? []) },
            stickiness: list[0].stickiness ?? "default", groupId: flagName, field: "")
    }

    private mutating func compileVariants(
        _ list: [(name: String, weight: Int, payload: VariantPayload?, overrides: [VariantOverride])],
        stickiness: String, groupId: String, field: String
    ) -> CompiledVariants? {
        let prefix = field.isEmpty ? "" : field + " "
        var variants: [CompiledVariant] = []
        var total: UInt64 = 0
        for (offset, variant) in list.enumerated() {
            let where_ = "\(prefix)variant \(offset + 1)"
            if variant.name.isEmpty { error("\(where_) name", "a variant name must not be empty", .local) }
            if variant.weight < 0 { error("\(where_) weight", "the weight \(variant.weight) is negative", .local) }
            if let payload = variant.payload { checkPayload(payload, field: "\(where_) payload") }
            let weight = UInt32(clamping: max(0, variant.weight))
            total += UInt64(weight)
            let overrides = variant.overrides.map { (ContextField(constraintName: $0.contextName), ExactStringSet($0.values)) }
            variants.append(CompiledVariant(name: variant.name, weight: weight, payload: variant.payload, overrides: overrides))
        }
        if total == 0 {
            error("\(prefix)variants", "the variant weights add up to 0, so no variant can be picked", .local)
        }
        guard total <= UInt64(UInt32.max) else {
            error("\(prefix)variants", "the variant weights add up to more than \(UInt32.max)", .local)
            return nil
        }
        let sticky: CompiledVariants.Stickiness =
            stickiness == "default" ? .standard : .field(ContextField(variantStickinessName: stickiness))
        return CompiledVariants(
            variants: variants, totalWeight: UInt32(total), stickiness: sticky, groupId: groupId,
            weightedCount: variants.filter { $0.weight > 0 }.count)
    }

    private mutating func checkPayload(_ payload: VariantPayload, field: String) {
        switch payload.type {
        case "string", "csv":
            break
        case "json":
            if (try? JSONSerialization.jsonObject(with: Data(payload.value.utf8), options: [.fragmentsAllowed])) == nil {
                warning(field, "the json payload is not valid JSON")
            }
        case "number":
            if UnleashNumber.parseContextValue(payload.value) == nil {
                warning(field, "the number payload '\(payload.value)' is not a number")
            }
        default:
            warning("\(field) type", "'\(payload.type)' is not a payload type Unleash defines (string, json, csv, number)")
        }
    }
}
