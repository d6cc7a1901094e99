import GatehouseCore
import GatehouseRuntime
import GatehouseWire

/// `webhook.status`, `webhook.deliveries`, `webhook.replay` and `webhook.test` (PROTOCOL.md, "Web
/// purchases and outbound delivery"): the outbox as its operators and backends see it. A target is
/// named by its webhook id, or `integrations.onesignal` for the pushes.
enum WebhookOperations {
    static let all: [Operation] = [status, deliveries, replay, test]

    static let status = Operation(name: "webhook.status", roles: [.server], body: .project { _ throws(GatehouseError) in
        { project in
            let statuses = project.outboxStatus()
            return Reply(["webhooks": .array(statuses.value.map(json))], after: statuses.lsn)
        }
    })

    static let deliveries = Operation(name: "webhook.deliveries", roles: [.server], body: .project { context throws(GatehouseError) in
        let target = try target(context.fields)
        let limit = try context.fields.optionalInt("limit", in: 1...Int64(DeliverySchedule.recentAttemptsKept)) ?? 100
        return { project throws(GatehouseError) in
            let attempts = try project.recentDeliveries(to: target, limit: Int(limit))
            return Reply(["deliveries": .array(attempts.value.map(json))], after: attempts.lsn)
        }
    })

    static let replay = Operation(name: "webhook.replay", roles: [.server], body: .project { context throws(GatehouseError) in
        let target = try target(context.fields)
        let eventID = try context.fields.optionalString("event_id", length: 1...64)
        let since = try context.fields.optionalInt("failed_since_ms", in: 0...Int64.max)
        guard (eventID == nil) != (since == nil) else {
            throw GatehouseError.badField("event_id", "give exactly one of event_id and failed_since_ms")
        }
        if let eventID, EventKey(eventID: eventID) == nil { throw GatehouseError.badField("event_id", "is not an event id") }
        return { project throws(GatehouseError) in
            let queued = try project.replayDeliveries(to: target, eventID: eventID, failedSinceMs: since)
            return Reply(["queued": .int(queued.value)], after: queued.lsn)
        }
    })

    static let test = Operation(name: "webhook.test", roles: [.server], body: .project { context throws(GatehouseError) in
        let id = try context.fields.string("webhook", length: 1...64)
        guard id != OutboxTarget.oneSignalName else {
            throw GatehouseError.badField("webhook", "a TEST event goes to a webhook, not to \(OutboxTarget.oneSignalName)")
        }
        return { project throws(GatehouseError) in
            let event = try project.testWebhook(id)
            return Reply(["event_id": .string(event.value)], after: event.lsn)
        }
    })

    private static func target(_ fields: Fields) throws(GatehouseError) -> OutboxTarget {
        OutboxTarget(name: try fields.string("webhook", length: 1...64))
    }

    private static func json(_ status: OutboxEndpointStatus) -> JSONValue {
        .object([
            "id": .string(status.target.name),
            "state": .string(status.disabled == nil ? "active" : "disabled"),
            "disabled_reason": .optional(status.disabled) { .string($0) },
            "pending": .int(status.pending),
            "failing": .int(status.failing),
            "failed": .int(status.failed),
            "in_flight": .int(status.inFlight),
            "last_success_ms": .optional(status.lastSuccessMs) { .int($0) },
            "last_error": .optional(status.lastError) { .string($0) },
            "next_attempt_ms": .optional(status.nextAttemptMs) { .int($0) },
        ])
    }

    private static func json(_ attempt: DeliveryAttempt) -> JSONValue {
        .object([
            "event_id": .string(attempt.event.eventID),
            "attempt": .int(Int(attempt.attempt)),
            "at_ms": .int(attempt.atMs),
            "status": .optional(attempt.status) { .int($0) },
            "latency_ms": .int(attempt.latencyMs),
            "error": .optional(attempt.error) { .string($0) },
        ])
    }
}
