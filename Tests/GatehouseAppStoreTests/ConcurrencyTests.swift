import GatehouseAppStore
import Testing

/// One verifier serves many threads at once and gives every thread the same answers.
@Suite struct VerifierIsSafeToShare {
    @Test func concurrentVerificationsAgree() async throws {
        let verifier = try testCAVerifier()
        let good = try Vectors.mock("testNotification.jws")
        let renewal = try Vectors.mock("renewalInfo.jws")
        let bad = tampered(good, part: 1)
        let results = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var accepted = 0
                    for _ in 0..<60 {
                        if (try? verifier.verify(jws: good)) != nil { accepted += 1 }
                        if (try? verifier.verify(jws: renewal)) != nil { accepted += 1 }
                        if (try? verifier.verify(jws: bad)) != nil { accepted += 1000 }
                    }
                    return accepted
                }
            }
            var all: [Int] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results == Array(repeating: 120, count: 8))
    }
}
