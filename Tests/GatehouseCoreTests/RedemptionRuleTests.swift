import GatehouseBase
@testable import GatehouseCore
import Testing

// Redemption links (DESIGN.md, "Web purchases and redemption links"): the link a web buyer gets,
// and what redeeming it does in every case.

private enum Web {
    static let store = ProjectState.stripeStore
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    static func key(_ id: String) -> PurchaseKey { PurchaseKey(store: store, id: id) }

    static func checkout(_ event: String, _ subscription: String, reference: String? = nil, email: String? = "test@example.com",
                         session: String? = "cs_1") -> StripeNotice
    {
        StripeNotice(eventID: event, atMs: 1_000, action: .checkout(
            key: key(subscription), buyer: WebBuyer(reference: reference, email: email, sessionID: session), oneTime: nil))
    }

    static func invoice(_ event: String, _ subscription: String) -> StripeNotice {
        let transaction = StoreTransaction(
            store: store, kind: .subscription, transactionID: "in_" + subscription, originalTransactionID: subscription,
            productID: "pro_monthly", purchasedMs: 1_000, expiresMs: 31 * day, token: nil, price: 9.99, currency: "USD",
            periodType: .normal, environment: .sandbox)
        return StripeNotice(eventID: event, atMs: 1_000, action: .term(transaction, initial: true))
    }
}

extension PurchaseWorld {
    /// A paid Stripe subscription bought by a web buyer the app did not name: its web profile.
    mutating func webPurchase(_ subscription: String = "sub_1", email: String? = "test@example.com") throws -> ProfileID {
        let buyer = try #require(commit(try state.applyStripe(Web.checkout("evt_c_" + subscription, subscription, email: email),
                                                              nowMs: nowMs, random: random)).profileID)
        commit(try state.applyStripe(Web.invoice("evt_i_" + subscription, subscription), nowMs: nowMs, random: random))
        return buyer
    }

    func token(_ subscription: String = "sub_1") throws -> String {
        try #require(state.web.currentToken(of: Web.key(subscription)))
    }

    /// Redeems and logs what the rule decided; answers the outcome.
    mutating func redeem(_ id: ProfileID, _ token: String) throws(GatehouseError) -> Result<ProfileID, GatehouseError> {
        let decision = try state.redeem(profile: id, token: token, nowMs: nowMs)
        #expect(decision.batch.atMs == nowMs)
        apply(decision.batch)
        return decision.outcome
    }

    func link(_ subscription: String = "sub_1") -> RedemptionLink? { state.web.links[Web.key(subscription)] }
}

private func code(_ outcome: Result<ProfileID, GatehouseError>) -> ErrorCode? {
    if case .failure(let error) = outcome { return error.code }
    return nil
}

@Suite struct RedemptionLinkIssueRules {
    @Test func aBuyerTheAppDidNotNameGetsALinkAndItsEmailIsOwed() throws {
        var world = PurchaseWorld()
        let buyer = try world.webPurchase()
        let link = try #require(world.link())
        #expect(link.webProfile == buyer && link.generation == 1 && link.issuedMs == world.nowMs)
        #expect(link.mail == OwedMail(nextAttemptMs: world.nowMs) && link.emailedMs == world.nowMs)
        #expect(world.state.web.linkKey?.count == RedemptionToken.keyLength)
        let token = try world.token()
        #expect(token.hasPrefix("rdrt_") && token.count == 48 && RedemptionToken.isWellFormed(token))
        #expect(world.state.web.place(of: token) == WebPurchases.TokenPlace(purchase: Web.key("sub_1"), generation: 1))
        #expect(world.state.web.sessions == ["cs_1": Web.key("sub_1")])
    }

    @Test func aBuyerWithoutAnEmailGetsALinkButNoEmail() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase(email: nil)
        #expect(world.link()?.mail == nil && world.link()?.emailedMs == nil)
    }

    @Test func aNamedBuyerNeedsNoLink() throws {
        var world = PurchaseWorld()
        let alice = try world.create("alice")
        world.commit(try world.state.applyStripe(Web.checkout("evt_1", "sub_1", reference: "alice"), nowMs: world.nowMs,
                                                 random: world.random))
        #expect(world.state.web.links.isEmpty && world.state.web.linkKey == nil)
        #expect(world.state.web.sessions == ["cs_1": Web.key("sub_1")])
        #expect(world.state.sessionStanding("cs_1", nowMs: world.nowMs) == .linkedToAccount)
        #expect(world.state.web.pendingOwners == [Web.key("sub_1"): alice])
    }

    @Test func everyPurchaseHasItsOwnTokenUnderOneKey() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase("sub_1")
        let key = world.state.web.linkKey
        _ = try world.webPurchase("sub_2")
        #expect(world.state.web.linkKey == key, "the key is made once")
        #expect(try world.token("sub_1") != world.token("sub_2"))
    }

    @Test func aCloneHasLinksOfItsOwn() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let original = try world.token()
        let clone = world.state.cloned(as: try ProjectID(validating: "staging"), keys: world.state.keys)
        let cloned = try #require(clone.web.currentToken(of: Web.key("sub_1")))
        #expect(cloned != original)
        #expect(clone.web.place(of: original) == nil, "the original's link opens nothing in the clone")
        #expect(clone.web.place(of: cloned)?.purchase == Web.key("sub_1"))
        #expect(clone.web.links == world.state.web.links)
        #expect(world.state.web.place(of: cloned) == nil)
    }

    @Test func replayRebuildsTheLinksAndTheirIndex() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        world.nowMs += 25 * Web.hour
        _ = try world.redeem(try world.create(), try world.token())
        var replayed = world.start
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed == world.state)
        #expect(replayed.web.tokens == world.state.web.tokens)
        #expect(world.state.web.tokens.count == 2, "both generations are indexed")
        // Rebuilt from the stored fields alone, as a snapshot load does.
        let web = world.state.web
        let loaded = WebPurchases(pendingOwners: web.pendingOwners, linkKey: web.linkKey, links: web.links, sessions: web.sessions)
        #expect(loaded.tokens == web.tokens)
    }
}

@Suite struct RedemptionRules {
    @Test func redeemingMergesTheWebProfileIntoTheAppProfileOnce() throws {
        var world = PurchaseWorld()
        let buyer = try world.webPurchase()
        let app = try world.create()
        #expect(try world.redeem(app, try world.token()) == .success(app))
        #expect(world.state.purchases.subscription(Web.key("sub_1"))?.owner == app)
        #expect(world.entitlement("pro", of: app)?.isActive == true)
        #expect(world.profile(app).attributes["$email"]?.value == "test@example.com", "the buyer's attributes move")
        #expect(world.state.profiles.resolvedID(buyer) == app, "the web profile is now an alias")
        let redeemed = world.events(.purchaseRedeemed)
        #expect(redeemed.count == 1)
        #expect(redeemed.first?.profileID == app)
        #expect(redeemed.first?.details.contains(EventDetail("product_id", .string("pro_monthly"))) == true)
        #expect(redeemed.first?.details.contains(EventDetail("merged_from", .profiles([buyer]))) == true)
        #expect(world.events(.subscriberAlias).isEmpty, "a redemption is no alias")
        #expect(world.link()?.redeemedBy == app && world.link()?.mail == nil)
    }

    @Test func aSecondRedeemByTheSameProfileSucceedsAndChangesNothing() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let app = try world.create()
        let token = try world.token()
        _ = try world.redeem(app, token)
        let before = world.state
        let again = try world.state.redeem(profile: app, token: token, nowMs: world.nowMs)
        #expect(again.outcome == .success(app) && again.batch.changes.isEmpty)
        #expect(world.state == before)
        // Even once the link has expired, and through the profile the app profile merged into.
        world.nowMs += 48 * Web.hour
        #expect(try world.redeem(app, token) == .success(app))
        #expect(world.events(.purchaseRedeemed).count == 1)
    }

    @Test func anotherProfileIsToldThePurchaseBelongsToSomeoneElse() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let first = try world.create()
        let second = try world.create()
        let token = try world.token()
        _ = try world.redeem(first, token)
        let decision = try world.state.redeem(profile: second, token: token, nowMs: world.nowMs)
        #expect(code(decision.outcome) == .purchaseBelongsToOtherUser && decision.batch.changes.isEmpty)
        if case .failure(let error) = decision.outcome { #expect(error.details == [.legacyCode(7852)]) }
        #expect(world.state.purchases.subscription(Web.key("sub_1"))?.owner == first)
    }

    /// The actor runs one redeem at a time: the second of two decided one after the other
    /// (each on the state the first left) loses, whichever profile comes first.
    @Test(arguments: [true, false])
    func ofTwoAtOnceExactlyOneWins(firstWins: Bool) throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let a = try world.create()
        let b = try world.create()
        let token = try world.token()
        let (winner, loser) = firstWins ? (a, b) : (b, a)
        let outcomes = [try world.redeem(winner, token), try world.redeem(loser, token)]
        #expect(outcomes[0] == .success(winner))
        #expect(code(outcomes[1]) == .purchaseBelongsToOtherUser)
        #expect(world.events(.purchaseRedeemed).count == 1)
        #expect(world.state.purchases.subscription(Web.key("sub_1"))?.owner == winner)
    }

    @Test func anExpiredLinkIssuesAFreshOneAndOwesItsEmailAtMostHourly() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let app = try world.create()
        let old = try world.token()
        world.nowMs += 24 * Web.hour
        let expired = try world.redeem(app, old)
        #expect(expired == .failure(ProjectState.expiredError(email: "test@example.com")))
        if case .failure(let error) = expired {
            #expect(error.code == .expired)
            #expect(error.details == [.legacyCode(7853), .obfuscatedEmail("t***@e*****e.com")])
        }
        let fresh = try world.token()
        #expect(fresh != old)
        #expect(world.link()?.generation == 2 && world.link()?.issuedMs == world.nowMs)
        #expect(world.link()?.mail == OwedMail(nextAttemptMs: world.nowMs) && world.link()?.emailedMs == world.nowMs)

        // Within the hour: still expired, no new link, no new email.
        world.nowMs += Web.hour - 1
        let before = world.state
        #expect(code(try world.redeem(app, old)) == .expired)
        #expect(world.state == before)
        // An hour after the last email: another one, with another link.
        world.nowMs += 1
        #expect(code(try world.redeem(app, old)) == .expired)
        #expect(world.link()?.generation == 3)
        #expect(try world.token() != fresh)
        // A replaced link answers expired, though it is younger than the link hours.
        #expect(code(try world.state.redeem(profile: app, token: fresh, nowMs: world.nowMs).outcome) == .expired)
        // The current one redeems.
        #expect(try world.redeem(app, try world.token()) == .success(app))
        #expect(world.state.purchases.subscription(Web.key("sub_1"))?.owner == app)
    }

    @Test func anExpiredLinkWithoutAnEmailAnswersExpiredWithNoAddressAndChangesNothing() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase(email: nil)
        let app = try world.create()
        world.nowMs += 25 * Web.hour
        let decision = try world.state.redeem(profile: app, token: try world.token(), nowMs: world.nowMs)
        #expect(decision.batch.changes.isEmpty)
        if case .failure(let error) = decision.outcome { #expect(error.details == [.legacyCode(7853)]) } else { Issue.record("redeemed") }
    }

    @Test(arguments: ["", "rdrt_", "rdrt_short", "RDRT_" + String(repeating: "A", count: 43),
                      "rdrt_" + String(repeating: "A", count: 43), "rdrt_" + String(repeating: "+", count: 43),
                      "rdrt_" + String(repeating: "A", count: 44), "not a token at all"])
    func aTokenThisProjectNeverIssuedIsInvalid(token: String) throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let app = try world.create()
        let decision = try world.state.redeem(profile: app, token: token, nowMs: world.nowMs)
        #expect(code(decision.outcome) == .invalidToken && decision.batch.changes.isEmpty)
        if case .failure(let error) = decision.outcome { #expect(error.details == [.legacyCode(7849)]) }
    }

    @Test func aTamperedTokenAndAnotherProjectsTokenAreInvalid() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        var other = PurchaseWorld(seed: 99)
        _ = try other.webPurchase()
        let app = try world.create()
        let theirs = try other.token()
        #expect(theirs != (try world.token()))
        #expect(code(try world.redeem(app, theirs)) == .invalidToken)
        var mine = Array(try world.token().utf8)
        mine[10] = mine[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(code(try world.redeem(app, String(decoding: mine, as: UTF8.self))) == .invalidToken)
    }

    @Test func anUnknownProfileIsNotFoundAndAForeignOneForbidden() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let token = try world.token()
        let unknown = ProfileID.make(tag: world.state.profileTag, random: SeededRandomSource(seed: 5))
        #expect(throws: GatehouseError.self) { try world.state.redeem(profile: unknown, token: token, nowMs: 0) }
        let foreign = ProfileID.make(tag: world.state.profileTag &+ 1, random: SeededRandomSource(seed: 5))
        #expect { try world.state.redeem(profile: foreign, token: token, nowMs: 0) } throws: { error in
            (error as? GatehouseError)?.code == .forbidden
        }
    }

    @Test func aDeletedWebProfileLeavesNothingToRedeem() throws {
        var world = PurchaseWorld()
        let buyer = try world.webPurchase()
        try world.delete(buyer)
        let app = try world.create()
        #expect(code(try world.redeem(app, try world.token())) == .invalidToken)
    }

    @Test func aPurchaseRedeemedBeforeItsInvoiceGoesToTheAppProfileWhenTheInvoiceArrives() throws {
        var world = PurchaseWorld()
        let buyer = try #require(world.commit(try world.state.applyStripe(Web.checkout("evt_1", "sub_1"), nowMs: world.nowMs,
                                                                          random: world.random)).profileID)
        #expect(world.state.web.pendingOwners == [Web.key("sub_1"): buyer])
        let app = try world.create()
        #expect(try world.redeem(app, try world.token()) == .success(app))
        #expect(world.state.web.pendingOwners == [Web.key("sub_1"): app], "the pending owner follows the merge")
        world.commit(try world.state.applyStripe(Web.invoice("evt_2", "sub_1"), nowMs: world.nowMs, random: world.random))
        #expect(world.state.purchases.subscription(Web.key("sub_1"))?.owner == app)
        #expect(world.entitlement("pro", of: app)?.isActive == true)
    }
}

@Suite struct RedemptionPageStandingRules {
    @Test func theLinkPageFollowsTheLinkThroughItsStates() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let token = try world.token()
        #expect(world.state.linkStanding(token: token, nowMs: world.nowMs) == .ready(token: token))
        #expect(world.state.sessionStanding("cs_1", nowMs: world.nowMs) == .link(.ready(token: token)))
        #expect(world.state.sessionStanding("cs_unknown", nowMs: world.nowMs) == .pending)
        #expect(world.state.linkStanding(token: "rdrt_nope", nowMs: world.nowMs) == .invalid)
        let later = world.nowMs + 24 * Web.hour
        #expect(world.state.linkStanding(token: token, nowMs: later) == .expired(obfuscatedEmail: "t***@e*****e.com"))
        _ = try world.redeem(try world.create(), token)
        #expect(world.state.linkStanding(token: token, nowMs: world.nowMs) == .redeemed)
    }
}

@Suite struct ObfuscatedEmailRules {
    @Test(arguments: [
        ("test@example.com", "t***@e*****e.com"), ("a@b.co", "a@b.co"), ("ab@cd.org", "a*@cd.org"),
        ("john.doe@mail.example.co.uk", "j*******@m**l.example.co.uk"), ("x@localhost", "x@l*******t"),
    ])
    func addressesAreHiddenAsDesignSays(address: String, shown: String) {
        #expect(ObfuscatedEmail.make(address) == shown)
    }

    @Test func notAnAddressShowsNothing() {
        #expect(ObfuscatedEmail.make("nobody") == nil)
        #expect(ObfuscatedEmail.make("@example.com") == nil)
        #expect(ObfuscatedEmail.make("a@") == nil)
    }
}
