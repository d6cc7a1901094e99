/// A store purchase's key: a subscription by store and original transaction id, a one-time
/// purchase by store and transaction id.
public struct PurchaseKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let store: String
    public let id: String

    public init(store: String, id: String) {
        self.store = store
        self.id = id
    }

    public static func < (a: PurchaseKey, b: PurchaseKey) -> Bool { (a.store, a.id) < (b.store, b.id) }

    public var description: String { "\(store):\(id)" }
}

/// A subscription with who owns it (`nil`: nobody yet) and the app account token it carries.
public struct HeldSubscription: Sendable, Equatable {
    public var subscription: Subscription
    public var owner: ProfileID?
    public var token: AppAccountToken?

    public init(_ subscription: Subscription, owner: ProfileID?, token: AppAccountToken?) {
        self.subscription = subscription
        self.owner = owner
        self.token = token
    }

    public var key: PurchaseKey { PurchaseKey(store: subscription.store, id: subscription.originalTransactionID) }
}

/// A one-time purchase with who owns it and the app account token it carries.
public struct HeldPurchase: Sendable, Equatable {
    public var purchase: OneTimePurchase
    public var owner: ProfileID?
    public var token: AppAccountToken?

    public init(_ purchase: OneTimePurchase, owner: ProfileID?, token: AppAccountToken?) {
        self.purchase = purchase
        self.owner = owner
        self.token = token
    }

    public var key: PurchaseKey { PurchaseKey(store: purchase.store, id: purchase.transactionID) }
}

/// A purchase a profile owned and lost to another profile (a transfer): the profile still lists
/// the entitlements it gave, inactive (PROTOCOL.md: entitlements list every entitlement the
/// profile ever had).
public struct FormerSource: Sendable, Hashable, Comparable {
    public enum Kind: UInt8, Sendable, Hashable {
        case subscription = 1
        case oneTime = 2
    }

    public let kind: Kind
    public let key: PurchaseKey

    public init(kind: Kind, key: PurchaseKey) {
        self.kind = kind
        self.key = key
    }

    public static func < (a: FormerSource, b: FormerSource) -> Bool { (a.kind.rawValue, a.key) < (b.kind.rawValue, b.key) }
}

/// What the timer waits for: a subscription's expiry (or end of grace), or a grant's end.
public enum Deadline: Sendable, Hashable, Comparable {
    case subscription(PurchaseKey)
    case grant(ProfileID, entitlement: String)

    /// Subscriptions before grants, then by key: the order due items are expired in.
    public static func < (a: Deadline, b: Deadline) -> Bool {
        switch (a, b) {
        case (.subscription(let x), .subscription(let y)): x < y
        case (.subscription, .grant): true
        case (.grant, .subscription): false
        case (.grant(let p, let e), .grant(let q, let f)): p == q ? e < f : p < q
        }
    }
}

/// Everything a project's profiles bought or were given (DESIGN.md, "Who owns a purchase"),
/// with O(1) indexes by owner and by the token of purchases no profile owns yet, the store
/// notification ids already applied, and the timer queues of the project.
///
/// Sized for a million purchases in one project: each purchase is stored once, in a
/// ``PurchaseTable`` with its indexes, and the timer queue names a subscription by its slot,
/// never by its key.
///
/// The indexes and the queues are derived from the purchases and grants: a book rebuilt from
/// its stored parts equals the one it came from, and equality compares the stored parts only.
public struct PurchaseBook: Sendable {
    public private(set) var subscriptions = PurchaseTable<HeldSubscription>()
    public private(set) var oneTimePurchases = PurchaseTable<HeldPurchase>()
    /// Grants, found by profile (and entitlement).
    private var grantTable = GrantTable()
    /// Per profile, the purchases it lost to transfers (ordered); none for most profiles.
    public private(set) var formerSources: [ProfileID: [FormerSource]] = [:]
    /// The reverse of `formerSources` (derived): who lost each purchase.
    private var formerHolders: [FormerSource: Set<ProfileID>] = [:]
    /// The store notifications applied in the last ``NotificationMemory/keptMs``, oldest first.
    public var seenNotifications: [SeenNotification] { notifications.live }
    public var seenNotificationCount: Int { notifications.count }

    /// Lends each remembered notification's key (its UTF-8 bytes) and time, oldest first, as
    /// ``seenNotifications`` lists them, without making a `String` of each (a snapshot writes a
    /// million of them for a big project).
    public func forEachSeenNotification(_ body: (UnsafeBufferPointer<UInt8>, Int64) -> Void) {
        notifications.forEach(body)
    }
    private var notifications = NotificationMemory()

    /// Subscription deadlines by slot; grants (few) by profile and entitlement.
    private var subscriptionDeadlines = DeadlineQueue<Int>()
    private var grantDeadlines = DeadlineQueue<Deadline>()

    public init() {}

    /// Rebuilds the indexes and the timer queues from stored parts. Of purchases listed twice
    /// (damage: a reader compares the counts) the first is kept.
    public init(
        subscriptions: [HeldSubscription], oneTimePurchases: [HeldPurchase],
        grants: [(ProfileID, PromotionalGrant)], seenNotifications: [SeenNotification],
        formerSources: [ProfileID: [FormerSource]] = [:]
    ) {
        for (profile, sources) in formerSources {
            for source in sources { remember(source, for: profile) }
        }
        self.subscriptions.reserveCapacity(subscriptions.count)
        self.oneTimePurchases.reserveCapacity(oneTimePurchases.count)
        subscriptionDeadlines.reserveCapacity(subscriptions.count)
        for held in subscriptions {
            if let slot = self.subscriptions.insert(held), let deadline = held.subscription.nextDeadlineMs {
                subscriptionDeadlines.push(deadline, slot)
            }
        }
        for held in oneTimePurchases { _ = self.oneTimePurchases.insert(held) }
        for (profile, grant) in grants { store(grant, for: profile) }
        notifications.reserveCapacity(seenNotifications.count)
        for seen in seenNotifications { notifications.insert(seen) }
        dropStaleDeadlines()
    }

    // MARK: Reading

    public func subscription(_ key: PurchaseKey) -> HeldSubscription? { subscriptions[key] }
    public func oneTimePurchase(_ key: PurchaseKey) -> HeldPurchase? { oneTimePurchases[key] }

    /// The subscriptions a profile owns, ordered by key.
    public func subscriptions(ownedBy id: ProfileID) -> [Subscription] {
        subscriptions.slots(ownedBy: id).map { subscriptions[slot: $0].subscription }
            .sorted { ($0.store, $0.originalTransactionID) < ($1.store, $1.originalTransactionID) }
    }

    /// The one-time purchases a profile owns, ordered by purchase time, then key.
    public func oneTimePurchases(ownedBy id: ProfileID) -> [OneTimePurchase] {
        oneTimePurchases.slots(ownedBy: id).map { oneTimePurchases[slot: $0].purchase }
            .sorted { ($0.purchasedMs, $0.store, $0.transactionID) < ($1.purchasedMs, $1.store, $1.transactionID) }
    }

    /// What the profile lost to transfers and does not own again, as subscriptions and purchases.
    public func formerHoldings(of id: ProfileID) -> (subscriptions: [Subscription], purchases: [OneTimePurchase]) {
        var result: ([Subscription], [OneTimePurchase]) = ([], [])
        for source in formerSources[id] ?? [] {
            switch source.kind {
            case .subscription: if let held = subscriptions[source.key] { result.0.append(held.subscription) }
            case .oneTime: if let held = oneTimePurchases[source.key] { result.1.append(held.purchase) }
            }
        }
        return result
    }

    /// A profile's grants, ordered by entitlement.
    public func grants(of id: ProfileID) -> [PromotionalGrant] { grantTable.grants(of: id) }

    public func grant(of id: ProfileID, entitlement: String) -> PromotionalGrant? { grantTable.grant(of: id, entitlement: entitlement) }

    /// Every grant with its profile, by profile, then entitlement (the order storage writes).
    public var allGrants: [(profile: ProfileID, grant: PromotionalGrant)] { grantTable.all }

    public var grantCount: Int { grantTable.count }

    /// Grants by profile, then by entitlement (a view made on each call, for checks and tests).
    public var grants: [ProfileID: [String: PromotionalGrant]] {
        var grants: [ProfileID: [String: PromotionalGrant]] = [:]
        for (profile, grant) in grantTable.all { grants[profile, default: [:]][grant.entitlementID] = grant }
        return grants
    }

    /// Whether the profile owns a store purchase (grants do not count).
    public func ownsPurchase(_ id: ProfileID) -> Bool { subscriptions.ownsAny(id) || oneTimePurchases.ownsAny(id) }

    /// Whether any subscription the profile owns is entitling at `nowMs`.
    public func hasActiveSubscription(_ id: ProfileID, nowMs: Int64) -> Bool {
        subscriptions.slots(ownedBy: id).contains { subscriptions[slot: $0].subscription.isEntitling(nowMs: nowMs) }
    }

    public func hasSeen(notification: String, store: String) -> Bool {
        notifications.contains(SeenNotification.key(store: store, id: notification))
    }

    /// The earliest moment the timer has something to do, if any. O(1): every change ends with
    /// ``dropStaleDeadlines()`` and a rebuilt book queues live deadlines only, so the top of
    /// each queue is always live.
    public var nextDeadlineMs: Int64? {
        guard let subscription = subscriptionDeadlines.top?.ms else { return grantDeadlines.top?.ms }
        guard let grant = grantDeadlines.top?.ms else { return subscription }
        return min(subscription, grant)
    }

    /// Everything due at `nowMs` (deadline ≤ `nowMs`), ordered by deadline, then key. Read only.
    public func due(nowMs: Int64) -> [Deadline] {
        let dueSubscriptions = subscriptionDeadlines.entries(atOrBefore: nowMs)
            .filter { subscriptions[slot: $0.item].subscription.nextDeadlineMs == $0.ms }
            .map { (ms: $0.ms, deadline: Deadline.subscription(subscriptions[slot: $0.item].key)) }
        let dueGrants = grantDeadlines.entries(atOrBefore: nowMs)
            .filter { Self.current(of: $0.item, grants: grantTable) == $0.ms }
            .map { (ms: $0.ms, deadline: $0.item) }
        var seen = Set<Deadline>()
        return (dueSubscriptions + dueGrants)
            .filter { seen.insert($0.deadline).inserted }
            .sorted { $0.ms != $1.ms ? $0.ms < $1.ms : $0.deadline < $1.deadline }
            .map(\.deadline)
    }

    /// The deadline a grant has now, by its stored state (`nil` for anything else).
    private static func current(of deadline: Deadline, grants: GrantTable) -> Int64? {
        guard case .grant(let profile, let entitlement) = deadline else { return nil }
        return grants.grant(of: profile, entitlement: entitlement)?.nextDeadlineMs
    }

    // MARK: Changes (called by ProjectState.apply only; each keeps every index consistent)

    /// Inserts or replaces a subscription; answers what it replaced.
    @discardableResult
    mutating func store(_ held: HeldSubscription) -> HeldSubscription? {
        let (slot, previous) = subscriptions.store(held)
        // A deadline that moved gets a new entry; the old one goes stale.
        if let deadline = held.subscription.nextDeadlineMs, deadline != previous?.subscription.nextDeadlineMs {
            subscriptionDeadlines.push(deadline, slot)
        }
        return previous
    }

    /// Inserts or replaces a one-time purchase; answers what it replaced.
    @discardableResult
    mutating func store(_ held: HeldPurchase) -> HeldPurchase? {
        oneTimePurchases.store(held).previous
    }

    mutating func store(_ grant: PromotionalGrant, for profile: ProfileID) {
        grantTable.store(grant, for: profile)
        if let deadline = grant.nextDeadlineMs { grantDeadlines.push(deadline, .grant(profile, entitlement: grant.entitlementID)) }
    }

    mutating func markSeen(notification: String, store: String, atMs: Int64) {
        notifications.insert(SeenNotification(key: SeenNotification.key(store: store, id: notification), atMs: atMs))
    }

    /// Forgets the notification ids older than their window before `nowMs` (after every batch).
    mutating func forgetNotifications(at nowMs: Int64) {
        notifications.forget(at: nowMs)
    }

    /// Purchases held unowned under `token` now belong to `profile` (it took that token).
    /// Answers the purchases claimed.
    mutating func claim(token: AppAccountToken, for profile: ProfileID) -> [PurchaseKey] {
        let subscriptionSlots = subscriptions.slots(heldUnder: token)
        let oneTimeSlots = oneTimePurchases.slots(heldUnder: token)
        for slot in subscriptionSlots { subscriptions.setOwner(profile, at: slot) }
        for slot in oneTimeSlots { oneTimePurchases.setOwner(profile, at: slot) }
        let keys = subscriptionSlots.map { subscriptions[slot: $0].key } + oneTimeSlots.map { oneTimePurchases[slot: $0].key }
        return keys.sorted()
    }

    /// Everything `source` owns or was granted moves to `target` (a merge). Of two grants of the
    /// same entitlement the target keeps the one ``PromotionalGrant/keeps(_:over:)`` prefers.
    mutating func move(from source: ProfileID, to target: ProfileID) {
        for former in formerSources[source] ?? [] {
            forget(former, for: source)
            remember(former, for: target)
        }
        reown(everythingOf: source, to: target)
        for grant in grantTable.removeAll(of: source) {
            if let existing = grantTable.grant(of: target, entitlement: grant.entitlementID), !PromotionalGrant.keeps(grant, over: existing) {
                continue
            }
            store(grant, for: target)
        }
    }

    /// A deleted profile's purchases become unowned, held under their tokens; its grants go.
    mutating func release(_ profile: ProfileID) {
        reown(everythingOf: profile, to: nil)
        _ = grantTable.removeAll(of: profile)
        for former in formerSources[profile] ?? [] { forget(former, for: profile) }
    }

    /// The profiles that lost `source` to a transfer and still list its entitlements.
    public func formerHolders(of source: FormerSource) -> [ProfileID] {
        (formerHolders[source] ?? []).sorted()
    }

    /// `source` moved from `previous` to `owner`: the loser remembers it, the winner forgets it.
    mutating func noteTransfer(_ source: FormerSource, from previous: ProfileID?, to owner: ProfileID?) {
        guard previous != owner else { return }
        if let owner { forget(source, for: owner) }
        if let previous, owner != nil { remember(source, for: previous) }
    }

    private mutating func remember(_ source: FormerSource, for profile: ProfileID) {
        var list = formerSources[profile] ?? []
        guard !list.contains(source) else { return }
        list.insert(source, at: list.firstIndex { source < $0 } ?? list.endIndex)
        formerSources[profile] = list
        formerHolders[source, default: []].insert(profile)
    }

    private mutating func forget(_ source: FormerSource, for profile: ProfileID) {
        guard var list = formerSources[profile], let index = list.firstIndex(of: source) else { return }
        list.remove(at: index)
        formerSources[profile] = list.isEmpty ? nil : list
        formerHolders[source]?.remove(profile)
        if formerHolders[source]?.isEmpty == true { formerHolders[source] = nil }
    }

    /// Lets the timer queues forget what is no longer due (called after each applied batch).
    mutating func dropStaleDeadlines() {
        // Captures the tables the checks read, not `self`: a copy of the whole book would share
        // the queues' buffers, and the first pop would copy an entire queue.
        let subscriptions = self.subscriptions
        subscriptionDeadlines.dropStale { subscriptions[slot: $0].subscription.nextDeadlineMs }
        let grants = grantTable
        grantDeadlines.dropStale { Self.current(of: $0, grants: grants) }
    }

    /// The purchases `owner` owns go to `newOwner` (`nil`: unowned, held under their tokens).
    private mutating func reown(everythingOf owner: ProfileID, to newOwner: ProfileID?) {
        for slot in subscriptions.slots(ownedBy: owner) { subscriptions.setOwner(newOwner, at: slot) }
        for slot in oneTimePurchases.slots(ownedBy: owner) { oneTimePurchases.setOwner(newOwner, at: slot) }
    }
}

extension PurchaseBook: Equatable {
    /// The stored parts only: the indexes and the queue follow from them.
    public static func == (a: PurchaseBook, b: PurchaseBook) -> Bool {
        a.subscriptions == b.subscriptions && a.oneTimePurchases == b.oneTimePurchases && a.grantTable == b.grantTable
            && a.formerSources == b.formerSources
            && a.notifications.live == b.notifications.live
    }
}

/// A store notification applied: `<store>:<notification id>`, and when (the server clock).
public struct SeenNotification: Sendable, Equatable {
    public let key: String
    public let atMs: Int64

    public init(key: String, atMs: Int64) {
        self.key = key
        self.atMs = atMs
    }

    static func key(store: String, id: String) -> String { "\(store):\(id)" }
}

/// The notification ids applied lately, so a redelivery is applied once. Stores redeliver for
/// days (Apple for up to about three), so ids are kept 30 days and then forgotten, oldest first,
/// as new ones arrive: memory follows the notification rate, not the project's age. A repeat
/// older than that is applied again, which changes nothing: every store event is applied by the
/// store's dates and terms are keyed by transaction id.
///
/// A project with a million subscribers remembers about a million ids. They are a
/// ``KeyTimeline``: about 80 bytes an id, where a `Set<String>` and an array of them took about
/// 150 and were copied whole (some 35 ms inside the project's actor) by the first notification
/// after each snapshot's capture.
struct NotificationMemory: Sendable {
    static let keptMs: Int64 = 30 * 86_400_000

    private var timeline = KeyTimeline<Void>()

    /// The ids remembered, oldest first.
    var live: [SeenNotification] {
        timeline.positions.map { SeenNotification(key: timeline.key(at: $0), atMs: timeline[$0].atMs) }
    }

    var count: Int { timeline.count }

    /// Lends each id's key (UTF-8) and time, oldest first.
    func forEach(_ body: (UnsafeBufferPointer<UInt8>, Int64) -> Void) {
        timeline.forEach { key, entry in body(key, entry.atMs) }
    }

    func contains(_ key: String) -> Bool { timeline.position(of: key) != nil }

    /// Room for `count` more ids (a book read back from a snapshot).
    mutating func reserveCapacity(_ count: Int) {
        timeline.reserveCapacity(count)
    }

    /// Forgets what is older than the window before `seen`, then remembers it.
    mutating func insert(_ seen: SeenNotification) {
        forget(at: seen.atMs)
        _ = timeline.append(seen.key, atMs: seen.atMs, { _ in () })
    }

    mutating func forget(at nowMs: Int64) {
        timeline.forget(olderThan: Self.keptMs, at: nowMs)
    }

    var entriesMoved: Int { timeline.entriesMoved }
}
