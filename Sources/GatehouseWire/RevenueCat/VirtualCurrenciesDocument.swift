public import GatehouseCore

/// The body of `GET /v1/subscribers/{id}/virtual_currencies` (HTTP.md, "Endpoints"):
/// `{virtual_currencies: {CODE: {balance, name, code, description}}}`, every currency of the
/// config in its order. The config gives currencies no description, so it is `null`.
public enum VirtualCurrenciesDocument {
    /// `balances` as ``ProjectState/Holdings`` lists them; a currency the config no longer names
    /// is left out.
    public static func json(balances: [CurrencyBalance], config: ProjectConfig) -> JSONObject {
        var listed = Set<String>()
        var currencies = JSONObject()
        for balance in balances where listed.insert(balance.code).inserted {
            guard let currency = config.currency(code: balance.code) else { continue }
            currencies.append(currency.code, [
                "balance": .int(balance.balance),
                "name": .string(currency.name),
                "code": .string(currency.code),
                "description": .null,
            ])
        }
        return ["virtual_currencies": .object(currencies)]
    }
}
