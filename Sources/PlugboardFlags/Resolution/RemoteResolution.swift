import Foundation

extension FlagResolver {
    /// A flag's value in the type its definition gives it, for remote evaluation (OFREP), where the server and not
    /// the caller decides the type.
    ///
    /// - A flag without variants (`hasVariants` false) is a boolean: `.bool(enabled)`, with the reasons of
    ///   ``bool(_:default:context:)``.
    /// - A flag with variants has the value of the variant it picks: its payload (`string` and `csv` as a string,
    ///   `number` as a number, `json` as the parsed JSON), or the variant's name when it has no payload. When no
    ///   variant applies (off, no strategy matched), the value is nil: the caller's default.
    ///
    /// - Returns: The details, and whether the flag is on for the context (Unleash's `isEnabled`).
    public func remoteValue(_ flag: String, hasVariants: Bool, context: UnleashContext) -> (
        details: ResolutionDetails<FlagJSON?>, enabled: Bool
    ) {
        if let notReady = notReady(flag, FlagJSON?.none) { return (notReady, false) }
        let evaluation = currentSnapshot.evaluate(flag, context: context, wantVariant: hasVariants)
        switch evaluation.outcome {
        case .notFound, .broken:
            return (failure(flag, evaluation, nil), false)
        case .flagOff, .dependencyUnmet:
            return (ResolutionDetails(value: hasVariants ? nil : .bool(false), reason: .disabled), false)
        case .noStrategyMatched:
            return (ResolutionDetails(value: hasVariants ? nil : .bool(false), reason: .default), false)
        case .enabled:
            break
        }
        guard hasVariants else { return (ResolutionDetails(value: .bool(true), reason: Self.enabledReason(evaluation)), true) }
        let variant = evaluation.variant
        guard variant.enabled else { return (ResolutionDetails(value: nil, reason: .default), true) }
        let reason: ResolutionReason =
            switch evaluation.pick {
            case .override: .targetingMatch
            case .split: .split
            case .single, .none: Self.enabledReason(evaluation)
            }
        guard let payload = variant.payload else {
            return (ResolutionDetails(value: .string(variant.name), variant: variant.name, reason: reason), true)
        }
        switch payload.type {
        case "number":
            guard let number = UnleashNumber.parseContextValue(payload.value), number.isFinite else {
                return (parseError(flag, variant.name, "'\(payload.value)' is not a number"), true)
            }
            return (ResolutionDetails(value: .number(number), variant: variant.name, reason: reason), true)
        case "json":
            guard let value = try? JSONDecoder().decode(FlagJSON.self, from: Data(payload.value.utf8)) else {
                return (parseError(flag, variant.name, "the json payload is not valid JSON"), true)
            }
            return (ResolutionDetails(value: value, variant: variant.name, reason: reason), true)
        default:
            return (ResolutionDetails(value: .string(payload.value), variant: variant.name, reason: reason), true)
        }
    }

    private func parseError(_ flag: String, _ variant: String, _ why: String) -> ResolutionDetails<FlagJSON?> {
        ResolutionDetails(
            value: nil, variant: variant, reason: .error, errorCode: .parseError,
            errorMessage: "flag '\(flag)' variant '\(variant)': \(why)")
    }
}
