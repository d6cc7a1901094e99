import GatehouseCore
import GatehouseServer
import GatehouseTesting
import GatehouseWire
import Testing

/// `watch` and `unwatch` over real connections (PROTOCOL.md, "Sync and push").
@Suite struct Watches {
    @Test func aWatcherIsPushedEachChangeOnceInOrder() async throws {
        try await withTestServer { server in
            let keys = try await server.createProject("acme")
            let backend = try server.connect()
            try await backend.hello(keys.secretKey)
            #expect(try await backend.call("config.put", ["config": ["currencies": [["code": "COINS"]]]]).isSuccess)
            let sdk = try server.connect()
            try await sdk.hello(keys.publicKey)
            let id = try #require(try await sdk.call("profile.create").object("profile")?.string("profile_id"))
            let watcher = try server.connect()
            try await watcher.hello(keys.publicKey)
            #expect(try await watcher.call("watch", ["profile_id": .string(id)])["watching"] == true)
            var cursors: [Int64] = []
            for index in 1...3 {
                let credit = try await backend.call("currency.transact", [
                    "profile_id": .string(id), "currency": "COINS", "amount": .int(index), "idempotency_key": .string("k\(index)"),
                ])
                #expect(credit.isSuccess)
                let push = try await watcher.readAnswer()
                #expect(push["push"] == "changed")
                #expect(push.string("profile_id") == id)
                #expect(push["changed"] == ["currencies"])
                cursors.append(try #require(push.int("cursor")))
            }
            #expect(cursors == cursors.sorted() && Set(cursors).count == 3)
            #expect(try await sdk.call("profile.identify", ["profile_id": .string(id), "customer_user_id": "ann"]).isSuccess)
            #expect(try await watcher.readAnswer()["changed"] == ["identity"])
            #expect(try await backend.call("config.put", ["config": ["currencies": [["code": "COINS"], ["code": "GEMS"]]]]).isSuccess)
            #expect(try await watcher.readAnswer()["changed"] == ["offerings"])
            // The watcher's own requests and pushes share the connection, whole lines each.
            #expect(try await watcher.call("unwatch", ["profile_id": .string(id)])["watching"] == false)
            #expect(try await backend.call("currency.transact", [
                "profile_id": .string(id), "currency": "COINS", "amount": 5, "idempotency_key": "k9",
            ]).isSuccess)
            #expect(try await watcher.call("ping").isSuccess)
        }
    }
}
