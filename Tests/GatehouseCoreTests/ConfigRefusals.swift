import GatehouseBase
import GatehouseCore
import Testing

// The config suites' shared check: a refused config is `bad_request` naming its field, and
// changes nothing.

func stateHolding(_ config: ProjectConfig) -> ProjectState {
    let keys = KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk"))
    var state = ProjectState(id: try! ProjectID(validating: "acme"), name: "Acme", createdMs: 0, keys: keys)
    state.apply(ProjectState.ChangeBatch([.configReplaced(config)], atMs: 0))
    return state
}

/// Expects `bad_request` naming `field`, from `validate()` and from `replaceConfig` over a project
/// holding `stored`, which then keeps `stored` as it was.
func expectConfigRefused(_ config: ProjectConfig, at field: String, replacing stored: ProjectConfig,
                         sourceLocation: SourceLocation = #_sourceLocation)
{
    do throws(GatehouseError) {
        try config.validate()
        Issue.record("expected \(field) to be refused", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .badRequest, sourceLocation: sourceLocation)
        #expect(error.message.hasPrefix("\(field): "), "\(error.message)", sourceLocation: sourceLocation)
    }
    let state = stateHolding(stored)
    #expect(throws: GatehouseError.self, sourceLocation: sourceLocation) {
        _ = try state.replaceConfig(with: config, random: SeededRandomSource(seed: 1))
    }
    #expect(state.config == stored, sourceLocation: sourceLocation)
}
