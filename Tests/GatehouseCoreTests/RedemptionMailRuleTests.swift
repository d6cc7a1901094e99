import GatehouseBase
@testable import GatehouseCore
import Testing

// A redemption link's email (DESIGN.md, "Web purchases and redemption links" and "Outbound
// delivery"): each attempt's outcome settles the link's owed email on the delivery schedule, and
// an outcome about an email no longer owed changes nothing.

private let purchase = PurchaseKey(store: ProjectState.stripeStore, id: "sub_1")

extension PurchaseWorld {
    /// Settles `outcomes` and logs what the rule decided; answers the batch.
    @discardableResult
    mutating func settleMail(_ outcomes: [MailOutcome]) -> ProjectState.ChangeBatch {
        let batch = state.settleMail(outcomes, nowMs: nowMs)
        #expect(batch.atMs == nowMs)
        apply(batch)
        return batch
    }
}

private func outcome(_ attempt: UInt16, _ result: MailOutcome.Result, generation: UInt32 = 1, error: String? = "cannot_connect")
    -> MailOutcome
{
    MailOutcome(purchase: purchase, generation: generation, attempt: attempt, result: result,
                error: result == .sent ? nil : error)
}

@Suite struct RedemptionMailScheduleRules {
    @Test func aSentMessageIsSentAndAPermanentFailureFailsAtOnce() {
        #expect(MailOutcome.result(afterAttempt: 1, answer: .sent, nowMs: 1_000, randomFraction: 0.5) == .sent)
        #expect(MailOutcome.result(afterAttempt: 1, answer: .failure(permanent: true), nowMs: 1_000, randomFraction: 0.5) == .failed)
    }

    @Test func aPassingFailureIsDueAgainOnTheDeliveryScheduleUntilItsLastAttempt() {
        for attempt in 1..<DeliverySchedule.attemptsMax {
            let delay = DeliverySchedule.retryDelaysMs[attempt - 1]
            #expect(MailOutcome.result(afterAttempt: attempt, answer: .failure(permanent: false), nowMs: 1_000, randomFraction: 0.5)
                    == .retry(atMs: 1_000 + delay))
            #expect(MailOutcome.result(afterAttempt: attempt, answer: .failure(permanent: false), nowMs: 1_000, randomFraction: 0)
                    == .retry(atMs: 1_000 + Int64((Double(delay) * 0.8).rounded())), "20 % earlier at most")
        }
        #expect(MailOutcome.result(afterAttempt: DeliverySchedule.attemptsMax, answer: .failure(permanent: false), nowMs: 1_000,
                                   randomFraction: 0.5) == .failed)
    }
}

@Suite struct RedemptionMailSettleRules {
    @Test func aSentEmailIsOwedNoMore() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let before = try #require(world.link())
        let batch = world.settleMail([outcome(1, .sent)])
        var sent = before
        sent.mail = nil
        #expect(batch.changes == [.redemptionLinkStored(purchase, sent)])
        #expect(world.link() == sent, "the link, its generation and when its email was owed stay")
    }

    @Test func aRetryCountsTheAttemptKeepsItsErrorAndIsDueAgain() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        world.settleMail([outcome(1, .retry(atMs: world.nowMs + 5_000), error: "cannot_connect")])
        #expect(world.link()?.mail == OwedMail(attempts: 1, nextAttemptMs: world.nowMs + 5_000, lastError: "cannot_connect"))
        world.nowMs += 5_000
        world.settleMail([outcome(2, .retry(atMs: world.nowMs + 300_000), error: "deferred (451)")])
        #expect(world.link()?.mail == OwedMail(attempts: 2, nextAttemptMs: world.nowMs + 300_000, lastError: "deferred (451)"))
        world.nowMs += 300_000
        world.settleMail([outcome(3, .sent)])
        #expect(world.link()?.mail == nil)
    }

    @Test func aFailureForGoodOwesNothingMore() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let batch = world.settleMail([outcome(1, .failed, error: "refused (550)")])
        #expect(batch.changes.count == 1)
        #expect(world.link()?.mail == nil && world.link()?.generation == 1)
    }

    @Test func anOutcomeForAnotherAttemptThanTheOneOwedIsIgnored() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let owed = world.link()
        #expect(world.settleMail([outcome(2, .sent)]).changes.isEmpty, "the first attempt is owed")
        world.settleMail([outcome(1, .retry(atMs: world.nowMs + 5_000))])
        #expect(world.settleMail([outcome(1, .sent)]).changes.isEmpty, "the first attempt is settled already")
        #expect(world.link()?.mail?.attempts == 1)
        #expect(owed?.mail?.attempts == 0)
    }

    @Test func anOutcomeForAnOlderGenerationARedeemedLinkOrNoLinkIsIgnored() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let app = try world.create()
        let first = try world.token()
        // Past the link's hours, a redeem issues generation 2 and owes its email.
        world.nowMs += 25 * 3_600_000
        _ = try world.redeem(app, first)
        #expect(world.link()?.generation == 2 && world.link()?.mail == OwedMail(nextAttemptMs: world.nowMs))
        #expect(world.settleMail([outcome(1, .sent, generation: 1)]).changes.isEmpty, "the old generation's email")
        #expect(world.link()?.mail != nil)
        let unknown = MailOutcome(purchase: PurchaseKey(store: ProjectState.stripeStore, id: "sub_9"), generation: 1, attempt: 1,
                                  result: .sent)
        #expect(world.settleMail([unknown]).changes.isEmpty, "no such link")
        #expect(try world.redeem(app, try world.token()) == .success(app))
        #expect(world.link()?.mail == nil, "redeeming owes no email")
        #expect(world.settleMail([outcome(1, .failed, generation: 2)]).changes.isEmpty, "a redeemed link")
    }

    @Test func outcomesForOneLinkInOneBatchSettleInOrderAsOneChange() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        _ = try world.webPurchase("sub_2", email: "other@example.com")
        let second = MailOutcome(purchase: PurchaseKey(store: ProjectState.stripeStore, id: "sub_2"), generation: 1, attempt: 1,
                                 result: .retry(atMs: world.nowMs + 5_000), error: "timed_out")
        let batch = world.settleMail([outcome(1, .retry(atMs: world.nowMs + 5_000)), second, outcome(2, .sent)])
        #expect(batch.changes.count == 2)
        #expect(world.link()?.mail == nil)
        #expect(world.link("sub_2")?.mail?.attempts == 1)
    }

    @Test func theChangesThatOweOrRescheduleAnEmailReportItAndReplayRebuildsThem() throws {
        var world = PurchaseWorld()
        _ = try world.webPurchase()
        let owed = try #require(world.link())
        var probe = world.state
        let effects = probe.apply(ProjectState.ChangeBatch([.redemptionLinkStored(purchase, owed)], atMs: world.nowMs))
        #expect(effects.scheduledMail == [ScheduledMail(purchase: purchase, generation: 1, dueMs: world.nowMs)])
        var retried = owed
        retried.mail = OwedMail(attempts: 1, nextAttemptMs: world.nowMs + 5_000, lastError: "timed_out")
        #expect(probe.apply(ProjectState.ChangeBatch([.redemptionLinkStored(purchase, retried)], atMs: world.nowMs)).scheduledMail
                == [ScheduledMail(purchase: purchase, generation: 1, dueMs: world.nowMs + 5_000)])
        var sent = owed
        sent.mail = nil
        #expect(probe.apply(ProjectState.ChangeBatch([.redemptionLinkStored(purchase, sent)], atMs: world.nowMs)).scheduledMail.isEmpty)
        world.settleMail([outcome(1, .retry(atMs: world.nowMs + 5_000))])
        world.settleMail([outcome(2, .sent)])
        var replayed = world.start
        for batch in world.batches { replayed.apply(batch) }
        #expect(replayed == world.state)
    }
}

@Suite struct RedemptionMailContentRules {
    @Test func theEmailGoesToTheWebProfilesAddressWhileItHasOne() throws {
        var world = PurchaseWorld()
        let buyer = try world.webPurchase()
        #expect(world.state.mailAddress(of: purchase) == "test@example.com")
        #expect(world.state.mailAddress(of: PurchaseKey(store: ProjectState.stripeStore, id: "sub_9")) == nil)
        try world.delete(buyer)
        #expect(world.state.mailAddress(of: purchase) == nil)
    }

    @Test func theTwoFormsOfALink() {
        let token = "rdrt_" + String(repeating: "A", count: 43)
        #expect(RedemptionToken.deepLink(token, scheme: "scanner") == "scanner://redeem_web_purchase?redemption_token=" + token)
        #expect(RedemptionToken.httpsLink(token, publicURL: "https://pay.example.com") == "https://pay.example.com/pay/r/" + token)
        #expect(RedemptionToken.httpsLink(token, publicURL: "https://pay.example.com/") == "https://pay.example.com/pay/r/" + token)
    }
}
