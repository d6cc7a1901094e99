import Foundation
import GatehousePosix
import GatehouseTesting
import GatehouseWire
import Testing

/// `gatehouse serve --app-store-root=FILE`: the built binary trusts the named roots (DER or PEM,
/// repeatable) instead of Apple Root CA - G3, and refuses to start on a file it cannot use.
@Suite struct AppStoreRootOption {
    /// Apple's library vectors in `Tests/Fixtures/vectors`, found from this file's path.
    static let library = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/vectors/apple-app-store-server-library").path

    @Test(arguments: [["testCA.pem"], ["testCA.der"], ["testLeaf.pem", "testCA.der"]])
    func aServerTrustingApplesTestCAAcceptsItsTestNotification(_ roots: [String]) async throws {
        try await withTemporaryDirectory { directory in
            let server = try await ServerProcess.start(dataDirectory: directory.appending("data"),
                                           extraArguments: roots.map { "--app-store-root=\(Self.library)/certs/\($0)" })
            let admin = try await server.admin()
            let created = try await admin.call("project.create", ["project": "apple"])
            let secret = try #require(created.object("keys")?.string("secret"))
            let backend = try TestClient(connectingTo: server.address)
            try await backend.hello(secret)
            let put = try await backend.call("config.put", ["config": [
                "stores": ["app_store": ["bundle_id": "com.example", "environment": "sandbox"]],
            ]])
            #expect(put.isSuccess, "\(put)")
            let jws = try String(contentsOfFile: "\(Self.library)/mock_signed_data/testNotification.jws", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let answer = try await backend.call("store.notify", ["store": "app_store", "signed_payload": .string(jws)])
            #expect(answer["applied"] == true, "\(answer)")
            #expect(await server.stop().status == 0)
        }
    }

    @Test func theBuiltInRootRefusesApplesTestNotification() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await ServerProcess.start(dataDirectory: directory.appending("data"))
            let admin = try await server.admin()
            let created = try await admin.call("project.create", ["project": "apple"])
            let backend = try TestClient(connectingTo: server.address)
            try await backend.hello(try #require(created.object("keys")?.string("secret")))
            _ = try await backend.call("config.put", ["config": [
                "stores": ["app_store": ["bundle_id": "com.example", "environment": "sandbox"]],
            ]])
            let jws = try String(contentsOfFile: "\(Self.library)/mock_signed_data/testNotification.jws", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let answer = try await backend.call("store.notify", ["store": "app_store", "signed_payload": .string(jws)])
            #expect(answer.object("error")?.string("code") == "invalid_signature", "\(answer)")
            #expect(await server.stop().status == 0)
        }
    }

    @Test func aRootFileThatCannotBeUsedIsAUsageError() async throws {
        try await withTemporaryDirectory { directory in
            let notACertificate = directory.appending("not-a-certificate.pem")
            try await TestFiles.write(Data("hello\n".utf8), to: notACertificate)
            for file in [directory.appending("missing.der"), notACertificate] {
                let result = try await GatehouseProcess.start([
                    "serve", "--data-dir=\(directory.appending("data"))", "--listen=127.0.0.1:0", "--http=127.0.0.1:0", "--app-store-root=\(file)",
                ]).finish()
                #expect(result.status == 2, "\(file): \(result.errors)")
                #expect(result.errors.contains("--app-store-root"), "\(result.errors)")
            }
        }
    }
}
