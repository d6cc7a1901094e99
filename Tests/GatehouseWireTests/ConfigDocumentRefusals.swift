import GatehouseCore
import GatehouseWire
import Testing

/// Expects a config document to be refused with `bad_request` naming `field`.
func expectRefused(_ json: JSONObject, at field: String, sourceLocation: SourceLocation = #_sourceLocation) {
    do throws(GatehouseError) {
        let config = try ProjectConfig(json: json)
        Issue.record("expected \(field) to be refused, decoded \(config)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .badRequest, sourceLocation: sourceLocation)
        #expect(error.message.hasPrefix("\(field): "), "\(error.message)", sourceLocation: sourceLocation)
    }
}
