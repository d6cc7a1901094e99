import GatehouseBase
import GatehouseCore
@testable import GatehouseRuntime
import GatehouseStorage
import Testing

// Which owed emails the mail pump is handed (DESIGN.md, "Outbound delivery"): only those due,
// only once the change that owed them is durable, one at a time per link generation, and none
// that the state no longer owes.

private let buyer = ProfileID(high: 1, low: 2, tag: 3)
private let purchase = PurchaseKey(store: ProjectState.stripeStore, id: "sub_1")
private let publicURL = "https://pay.example.com"

/// A project whose web buyer (`buyer@example.com`) is owed the email of `purchase`'s link at 100.
private func owingState() throws -> ProjectState {
    let keys = KeyDigests(publicKey: SecretDigest(secret: "pk"), secretKey: SecretDigest(secret: "sk"))
    var state = ProjectState(id: try ProjectID(validating: "acme"), name: "Acme", createdMs: 0, keys: keys)
    let profile = Profile(id: buyer, customerUserID: nil, token: AppAccountToken(high: 4, low: 5),
                          attributes: ["$email": ProfileAttribute(value: "buyer@example.com", updatedMs: 1)], createdMs: 1,
                          lastSeenMs: 1, cursor: 0)
    state.apply(.init([
        .profileCreated(profile), .linkKeyMade(Array(repeating: 7, count: RedemptionToken.keyLength)),
        .redemptionLinkStored(purchase, RedemptionLink(webProfile: buyer, generation: 1, issuedMs: 100, emailedMs: 100,
                                                       mail: OwedMail(nextAttemptMs: 100))),
    ], atMs: 100))
    return state
}

private func stored(_ state: inout ProjectState, _ mail: OwedMail?, generation: UInt32 = 1, redeemedBy: ProfileID? = nil)
    -> [ScheduledMail]
{
    let link = RedemptionLink(webProfile: buyer, generation: generation, issuedMs: 100, emailedMs: 100, mail: mail,
                              redeemedBy: redeemedBy)
    return state.apply(.init([.redemptionLinkStored(purchase, link)], atMs: 200)).scheduledMail
}

@Suite struct MailQueueHandsOut {
    @Test func anOwedEmailWhenItIsDueWithWhatItsMessageSays() throws {
        let state = try owingState()
        var queue = MailQueue(state.web)
        #expect(queue.take(from: state, nowMs: 99, durableLSN: 0, publicURL: publicURL).due.isEmpty)
        #expect(queue.take(from: state, nowMs: 99, durableLSN: 0, publicURL: publicURL).nextDueMs == 100)
        let (due, next) = queue.take(from: state, nowMs: 100, durableLSN: 0, publicURL: publicURL)
        #expect(next == nil)
        let mail = try #require(due.first)
        #expect(due.count == 1)
        let token = try #require(state.web.currentToken(of: purchase))
        #expect(mail.purchase == purchase && mail.generation == 1 && mail.attempt == 1)
        #expect(mail.to == "buyer@example.com" && mail.appName == "Acme" && mail.supportEmail == nil && mail.linkHours == 24)
        #expect(mail.httpsLink == "https://pay.example.com/pay/r/" + token)
        #expect(mail.deepLink == WebSettings.defaultScheme(projectID: state.id) + "://redeem_web_purchase?redemption_token=" + token)
    }

    @Test func anEmailInFlightIsNotHandedOutAgainUntilItsOutcomeIsBack() throws {
        var state = try owingState()
        var queue = MailQueue(state.web)
        #expect(queue.take(from: state, nowMs: 100, durableLSN: 0, publicURL: publicURL).due.count == 1)
        queue.schedule([ScheduledMail(purchase: purchase, generation: 1, dueMs: 100)], lsn: 0)
        #expect(queue.take(from: state, nowMs: 100, durableLSN: 0, publicURL: publicURL).due.isEmpty, "leased")
        let outcome = MailOutcome(purchase: purchase, generation: 1, attempt: 1, result: .retry(atMs: 5_100), error: "timed_out")
        queue.release([outcome])
        let batch = state.settleMail([outcome], nowMs: 200)
        queue.schedule(state.apply(batch).scheduledMail, lsn: 2)
        #expect(queue.take(from: state, nowMs: 5_099, durableLSN: 2, publicURL: publicURL).nextDueMs == 5_100)
        #expect(queue.take(from: state, nowMs: 5_100, durableLSN: 2, publicURL: publicURL).due.first?.attempt == 2)
    }

    @Test func nothingBeforeTheChangeThatOwedItIsDurable() throws {
        var state = try owingState()
        var queue = MailQueue(WebPurchases())
        queue.schedule(stored(&state, OwedMail(nextAttemptMs: 150)), lsn: 7)
        #expect(queue.take(from: state, nowMs: 200, durableLSN: 6, publicURL: publicURL).due.isEmpty)
        #expect(queue.take(from: state, nowMs: 200, durableLSN: 7, publicURL: publicURL).due.count == 1)
    }

    @Test func anEmailTheStateNoLongerOwesIsDropped() throws {
        var state = try owingState()
        var queue = MailQueue(state.web)
        // Sent meanwhile (by an earlier server: the entry is a restart's), then redeemed, then a newer generation owed.
        _ = stored(&state, nil)
        #expect(queue.take(from: state, nowMs: 100, durableLSN: 0, publicURL: publicURL).due.isEmpty)
        queue.schedule(stored(&state, OwedMail(nextAttemptMs: 300), generation: 2, redeemedBy: buyer), lsn: 0)
        #expect(queue.take(from: state, nowMs: 300, durableLSN: 0, publicURL: publicURL).due.isEmpty, "redeemed")
        queue.schedule(stored(&state, OwedMail(nextAttemptMs: 400), generation: 3), lsn: 0)
        queue.schedule([ScheduledMail(purchase: purchase, generation: 2, dueMs: 400)], lsn: 0)
        let due = queue.take(from: state, nowMs: 400, durableLSN: 0, publicURL: publicURL).due
        #expect(due.map(\.generation) == [3], "only the current generation's")
        #expect(queue.isEmpty == false, "one in flight")
    }

    @Test func anOutcomeTheLogRefusedIsDueAgainAsTheStateHasIt() throws {
        let state = try owingState()
        var queue = MailQueue(state.web)
        #expect(queue.take(from: state, nowMs: 100, durableLSN: 0, publicURL: publicURL).due.count == 1)
        queue.returnUnsettled([MailOutcome(purchase: purchase, generation: 1, attempt: 1, result: .sent)], in: state)
        #expect(queue.take(from: state, nowMs: 100, durableLSN: 0, publicURL: publicURL).due.first?.attempt == 1)
    }

    @Test func atMostSixteenAtOnce() throws {
        var state = try owingState()
        var queue = MailQueue(WebPurchases())
        var scheduled: [ScheduledMail] = []
        for index in 0..<20 {
            let key = PurchaseKey(store: ProjectState.stripeStore, id: "sub_\(index + 10)")
            let link = RedemptionLink(webProfile: buyer, generation: 1, issuedMs: 100, mail: OwedMail(nextAttemptMs: 100))
            scheduled += state.apply(.init([.redemptionLinkStored(key, link)], atMs: 100)).scheduledMail
        }
        queue.schedule(scheduled, lsn: 0)
        let (due, next) = queue.take(from: state, nowMs: 100, durableLSN: 0, publicURL: publicURL)
        #expect(due.count == MailQueue.inFlightMax)
        #expect(next == nil, "no room: the pump is woken by an outcome")
        #expect(MailQueue.owedCount(in: state) == 21)
    }
}
