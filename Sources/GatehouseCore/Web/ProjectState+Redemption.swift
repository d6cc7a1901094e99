import GatehouseBase

// Redeeming a web purchase (DESIGN.md, "Web purchases and redemption links"): the rules that
// issue a purchase's link, redeem it, and answer what the link and success pages show.

extension ProjectState {
    /// What `web.redeem` decided: the batch to log (it may hold a fresh link even when the
    /// answer is `expired`) and the answer.
    public struct RedemptionDecision: Sendable, Equatable {
        public var batch: ChangeBatch
        /// The profile in use and its document, or the refusal to answer once `batch` is logged.
        public var outcome: Result<ProfileID, GatehouseError>
    }

    /// `web.redeem`: `profile` takes over the web purchase `token` links to, merging the web
    /// profile that bought it into itself.
    /// - A token this project never issued (malformed, unknown, another project's): `invalid_token`.
    /// - Already redeemed: by this profile (or one it has since merged into), success again with
    ///   no change; by another, `purchase_belongs_to_other_user`.
    /// - An older generation, or the current one past `redemption_link_hours`: `expired`. When the
    ///   buyer gave an email and none was owed in the last hour, a fresh link is issued and its
    ///   email owed; the answer carries the address, obfuscated.
    /// The project's actor runs one redeem at a time, so of two at once exactly one wins.
    public func redeem(profile id: ProfileID, token: String, nowMs: Int64) throws(GatehouseError) -> RedemptionDecision {
        let presented = try resolveProfileID(id)
        let none = ChangeBatch([], atMs: nowMs)
        guard let place = web.place(of: token), let link = web.links[place.purchase] else {
            return RedemptionDecision(batch: none, outcome: .failure(Self.invalidToken))
        }
        if let redeemer = link.redeemedBy {
            let current = profiles.resolvedID(redeemer)
            return RedemptionDecision(batch: none, outcome: current == presented ? .success(presented) : .failure(Self.belongsToOther))
        }
        guard let webProfile = profiles.resolvedID(link.webProfile), webProfile == link.webProfile else {
            // The web profile is gone (deleted): nothing is left to redeem.
            return RedemptionDecision(batch: none, outcome: .failure(Self.invalidToken))
        }
        if webProfile == presented { return RedemptionDecision(batch: none, outcome: .success(presented)) }
        let hours = config.web?.redemptionLinkHours ?? WebSettings.defaultRedemptionLinkHours
        guard place.generation == link.generation, !link.isExpired(nowMs: nowMs, hours: hours) else {
            return expired(place.purchase, link, nowMs: nowMs)
        }
        var redeemed = link
        redeemed.redeemedBy = presented
        redeemed.mail = nil
        let changes: [Change] = [
            .purchaseRedeemed(from: webProfile, into: presented, purchase: place.purchase),
            .redemptionLinkStored(place.purchase, redeemed),
        ]
        return RedemptionDecision(batch: ChangeBatch(changes, atMs: nowMs), outcome: .success(presented))
    }

    /// An expired link: a fresh one and its email when the buyer has an address and the last
    /// email is an hour old; the answer names the address either way.
    private func expired(_ key: PurchaseKey, _ link: RedemptionLink, nowMs: Int64) -> RedemptionDecision {
        guard let address = email(of: link.webProfile) else {
            return RedemptionDecision(batch: ChangeBatch([], atMs: nowMs), outcome: .failure(Self.expiredError(email: nil)))
        }
        var changes: [Change] = []
        if link.emailedMs.map({ nowMs - $0 >= RedemptionLink.emailIntervalMs }) ?? true {
            var fresh = link
            fresh.generation += 1
            fresh.issuedMs = nowMs
            fresh.emailedMs = nowMs
            fresh.mail = OwedMail(nextAttemptMs: nowMs)
            changes.append(.redemptionLinkStored(key, fresh))
        }
        return RedemptionDecision(batch: ChangeBatch(changes, atMs: nowMs), outcome: .failure(Self.expiredError(email: address)))
    }

    /// The buyer's address: the web profile's `$email`.
    func email(of id: ProfileID) -> String? {
        profiles.profile(id)?.attributes["$email"]?.value
    }

    static var invalidToken: GatehouseError {
        GatehouseError(.invalidToken, "the redemption token is not one this project issued", details: [.legacyCode(7849)])
    }

    static var belongsToOther: GatehouseError {
        GatehouseError(.purchaseBelongsToOtherUser, "another profile already redeemed this purchase", details: [.legacyCode(7852)])
    }

    static func expiredError(email: String?) -> GatehouseError {
        let obfuscated = email.flatMap(ObfuscatedEmail.make)
        let message = obfuscated.map { "the link has expired; a new one was sent to \($0)" } ?? "the link has expired"
        return GatehouseError(.expired, message, details: [.legacyCode(7853)] + (obfuscated.map { [.obfuscatedEmail($0)] } ?? []))
    }

    // MARK: Issuing

    /// The changes that give `key`, just bought by the new web profile `buyer`, its first link
    /// (and the project its link key, the first time): its email is owed when the buyer gave an
    /// address.
    func issueLink(for key: PurchaseKey, buyer: ProfileID, email: String?, nowMs: Int64, random: some RandomSource) -> [Change] {
        guard web.links[key] == nil else { return [] }
        var changes: [Change] = []
        if web.linkKey == nil { changes.append(.linkKeyMade(random.randomBytes(count: RedemptionToken.keyLength))) }
        let mail = email.map { _ in OwedMail(nextAttemptMs: nowMs) }
        changes.append(.redemptionLinkStored(key, RedemptionLink(webProfile: buyer, generation: 1, issuedMs: nowMs,
                                                                 emailedMs: mail == nil ? nil : nowMs, mail: mail)))
        return changes
    }

    // MARK: What the pages show

    /// Where a redemption link stands, for its https page.
    public enum LinkStanding: Sendable, Equatable {
        /// Current: its token (the page shows both forms).
        case ready(token: String)
        case redeemed
        /// Expired or replaced; the address a fresh link goes to, obfuscated, when there is one.
        case expired(obfuscatedEmail: String?)
        case invalid
    }

    /// The https page of `token` at `nowMs` (it changes nothing: a fresh link is issued only by
    /// a redeem, which the app makes).
    public func linkStanding(token: String, nowMs: Int64) -> LinkStanding {
        guard let place = web.place(of: token), let link = web.links[place.purchase] else { return .invalid }
        if link.redeemedBy != nil { return .redeemed }
        let hours = config.web?.redemptionLinkHours ?? WebSettings.defaultRedemptionLinkHours
        guard place.generation == link.generation, !link.isExpired(nowMs: nowMs, hours: hours) else {
            return .expired(obfuscatedEmail: email(of: link.webProfile).flatMap(ObfuscatedEmail.make))
        }
        return .ready(token: token)
    }

    /// Where a Checkout Session's purchase stands, for the success page.
    public enum SessionStanding: Sendable, Equatable {
        /// Bought by a web profile: the current link's standing.
        case link(LinkStanding)
        /// Bought by a profile the session named: nothing to redeem.
        case linkedToAccount
        /// Stripe's `checkout.session.completed` has not arrived.
        case pending
    }

    public func sessionStanding(_ sessionID: String, nowMs: Int64) -> SessionStanding {
        guard let key = web.sessions[sessionID] else { return .pending }
        guard let token = web.currentToken(of: key) else { return .linkedToAccount }
        return .link(linkStanding(token: token, nowMs: nowMs))
    }

    /// The details of a `PURCHASE_REDEEMED`: the purchase (its product, store and transaction)
    /// and the web profile merged away.
    func redeemedDetails(of key: PurchaseKey, mergedFrom source: ProfileID) -> [EventDetail] {
        var details: [EventDetail] = []
        if let held = purchases.subscription(key) {
            details += [EventDetail("product_id", .string(held.subscription.productID)), EventDetail("store", .string(key.store)),
                        EventDetail("original_transaction_id", .string(key.id))]
            if let term = held.subscription.currentTerm { details.append(EventDetail("transaction_id", .string(term.transactionID))) }
        } else if let held = purchases.oneTimePurchase(key) {
            details += [EventDetail("product_id", .string(held.purchase.productID)), EventDetail("store", .string(key.store)),
                        EventDetail("transaction_id", .string(held.purchase.transactionID))]
        }
        details.append(EventDetail("merged_from", .profiles([source])))
        return details
    }
}
