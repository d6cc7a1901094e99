import GatehouseCore
import GatehouseStripe
import GatehouseWire

/// Stripe's events in `store.notify` (DESIGN.md, "Web purchases and redemption links"): the
/// body is parsed before the project's actor is entered; the signature is checked, and the
/// event turned into a ``StripeNotice``, in the actor step against the project's config (its
/// secrets, its mode, the prices it sells), so nothing changes on any refusal and a refused
/// event does not use up its id.
enum StripeInput {
    /// The body Stripe posted, parsed (a parse failure is held and answered in the actor step,
    /// after the store and the signature, so an unsigned body is `invalid_signature`).
    static func event(_ body: [UInt8]) -> Result<StripeEvent, GatehouseError> {
        Result { () throws(GatehouseError) in try StripeEvent.parse(body) }
    }

    static func notice(body: [UInt8], signature: String?, event: Result<StripeEvent, GatehouseError>, config: ProjectConfig,
                       nowMs: Int64) throws(GatehouseError) -> StripeNotice
    {
        guard let stripe = config.stores.stripe else { throw TestStore.notEnabled(TestStore.stripeName) }
        try StripeSignature.verify(header: signature, body: body, secrets: stripe.webhookSecrets, nowSeconds: nowMs / 1000)
        let event = try event.get()
        let atMs = event.createdSeconds * 1000
        guard event.livemode == stripe.livemode else { return StripeNotice(eventID: event.id, atMs: atMs, action: .recordOnly) }
        return StripeNotice(eventID: event.id, atMs: atMs, action: action(event, stripe: stripe, config: config))
    }

    private static func action(_ event: StripeEvent, stripe: StripeSettings, config: ProjectConfig) -> StripeNotice.Action {
        let environment: StoreEnvironment = stripe.livemode ? .production : .sandbox
        switch event.object {
        case .checkoutSession(let session):
            return checkout(session, stripe: stripe, config: config, environment: environment, atSeconds: event.createdSeconds)
        case .invoice(let invoice):
            return term(invoice, stripe: stripe, environment: environment)
        case .subscription(let subscription):
            return update(subscription, deleted: event.usedType == .customerSubscriptionDeleted, stripe: stripe)
        case .charge(let charge):
            return refund(charge)
        case .dispute(let dispute):
            guard event.usedType == .chargeDisputeClosed, dispute.status == .lost else { return .recordOnly }
            return .chargeback(payment: dispute.paymentIntentID ?? dispute.chargeID)
        case .invoicePayment(let payment):
            guard payment.status == "paid", let id = payment.paymentIntentID ?? payment.chargeID else { return .recordOnly }
            return .paymentLinked(payment: id, invoice: payment.invoiceID)
        case .unused:
            return .recordOnly
        }
    }

    /// `charge.refunded`: the share of the charge refunded so far. Its payment is named by its
    /// PaymentIntent, as its `invoice_payment` and a one-time purchase name it, or by the charge
    /// when it was made without one.
    private static func refund(_ charge: StripeCharge) -> StripeNotice.Action {
        guard charge.amount > 0, charge.amountRefunded > 0 else { return .recordOnly }
        let fraction = charge.amountRefunded >= charge.amount ? 1 : Double(charge.amountRefunded) / Double(charge.amount)
        return .refund(payment: charge.paymentIntentID ?? charge.id, fraction: fraction)
    }

    /// A completed session names the buyer of its subscription, or is a paid one-time purchase
    /// of the product its metadata names (Checkout's webhook carries no line items; Gatehouse's
    /// purchase links set `metadata.product_id`).
    private static func checkout(_ session: StripeCheckoutSession, stripe: StripeSettings, config: ProjectConfig,
                                 environment: StoreEnvironment, atSeconds: Int64) -> StripeNotice.Action
    {
        let buyer = WebBuyer(reference: session.clientReferenceID ?? session.metadata["app_user_id"], email: session.email,
                             sessionID: session.id)
        switch session.mode {
        case .subscription:
            guard let id = session.subscriptionID else { return .recordOnly }
            return .checkout(key: PurchaseKey(store: ProjectState.stripeStore, id: id), buyer: buyer, oneTime: nil)
        case .payment:
            guard session.paymentStatus == .paid, let id = session.paymentIntentID, let productID = session.metadata["product_id"],
                let product = config.product(id: productID), product.type != .subscription
            else { return .recordOnly }
            let purchase = StoreTransaction(
                store: ProjectState.stripeStore, kind: .oneTime, transactionID: id, originalTransactionID: id, productID: product.id,
                purchasedMs: atSeconds * 1000, expiresMs: 0, token: nil,
                price: amount(session.amountTotal ?? 0, currency: session.currency), currency: session.currency?.uppercased(),
                periodType: .normal, environment: environment)
            return .checkout(key: purchase.key, buyer: buyer, oneTime: purchase)
        case .setup, .unknown:
            return .recordOnly
        }
    }

    /// A paid invoice of a subscription whose price the config sells is a term: the first
    /// (`subscription_create`) or a renewal. A free one (a trial's) is a free term.
    private static func term(_ invoice: StripeInvoice, stripe: StripeSettings, environment: StoreEnvironment) -> StripeNotice.Action {
        guard let subscription = invoice.subscriptionID,
            let line = invoice.lines.first(where: { $0.priceID.flatMap(stripe.product(forPrice:)) != nil }),
            let productID = line.priceID.flatMap(stripe.product(forPrice:))
        else { return .recordOnly }
        let initial = invoice.billingReason == "subscription_create"
        let price = amount(invoice.amountPaid, currency: invoice.currency)
        let transaction = StoreTransaction(
            store: ProjectState.stripeStore, kind: .subscription, transactionID: invoice.id, originalTransactionID: subscription,
            productID: productID, purchasedMs: line.periodStartSeconds * 1000, expiresMs: line.periodEndSeconds * 1000, token: nil,
            price: price, currency: invoice.currency.uppercased(), periodType: price > 0 ? .normal : .trial,
            environment: environment)
        return .term(transaction, initial: initial)
    }

    private static func update(_ subscription: StripeSubscription, deleted: Bool, stripe: StripeSettings) -> StripeNotice.Action {
        guard let item = subscription.items.first else { return .recordOnly }
        let status: StripeSubscriptionState.Status
        switch subscription.status {
        case _ where deleted: status = .ended
        case .trialing, .active: status = .active
        case .pastDue: status = .pastDue
        case .unpaid, .canceled, .incompleteExpired, .paused: status = .ended
        case .incomplete, .unknown: status = .incomplete
        }
        let product = subscription.items.lazy.compactMap { stripe.product(forPrice: $0.priceID) }.first
        return .subscription(
            key: PurchaseKey(store: ProjectState.stripeStore, id: subscription.id),
            StripeSubscriptionState(status: status, cancelAtPeriodEnd: subscription.cancelAtPeriodEnd, productID: product,
                                    periodStartMs: item.currentPeriodStartSeconds * 1000,
                                    periodEndMs: item.currentPeriodEndSeconds * 1000))
    }

    /// Stripe's amounts are in the currency's smallest unit; these currencies have none below
    /// the unit (Stripe's list of zero-decimal currencies).
    static let zeroDecimalCurrencies: Set<String> = [
        "bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv", "xaf", "xof", "xpf",
    ]

    static func amount(_ minorUnits: Int64, currency: String?) -> Double {
        zeroDecimalCurrencies.contains(currency?.lowercased() ?? "") ? Double(minorUnits) : Double(minorUnits) / 100
    }
}
