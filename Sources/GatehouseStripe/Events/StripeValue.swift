import GatehouseCore
import GatehouseWire

/// A string enumeration of Stripe's, read leniently: a value Stripe adds later reads as the
/// type's `unknown` case rather than failing the whole event.
protocol StripeValue {
    init(stripeValue: String)
}

extension Fields {
    func value<Value: StripeValue>(_ key: String, as type: Value.Type) throws(GatehouseError) -> Value {
        Value(stripeValue: try string(key))
    }

    func optionalValue<Value: StripeValue>(_ key: String, as type: Value.Type) throws(GatehouseError) -> Value? {
        try optionalString(key).map(Value.init(stripeValue:))
    }
}
