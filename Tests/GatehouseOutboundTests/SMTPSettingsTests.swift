import Foundation
import GatehouseOutbound
import GatehouseTesting
import Testing

/// The SMTP settings from the command line's URL, sender and credentials file.
@Suite struct SMTPSettingsTests {
    static func settings(
        _ url: String, from: String = "noreply@example.com", credentials: String? = nil, insecure: Bool = false
    ) throws(SMTPSettingsError) -> SMTPSettings {
        try SMTPSettings(url: url, from: from, credentialsFile: credentials, insecure: insecure)
    }

    /// Settings read with a credentials file holding `contents`, off the pool (the file is read
    /// as the server's start-up reads it, blocking).
    static func settings(_ url: String, credentialsHolding contents: [UInt8]) async throws -> SMTPSettings {
        let directory = try TemporaryDirectory(prefix: "gh-smtp")
        defer { directory.remove() }
        let path = directory.appending("credentials")
        try await TestFiles.write(Data(contents), to: path)
        return try await offThePool { try SMTPSettings(url: url, from: "noreply@example.com", credentialsFile: path, insecure: false) }
    }

    @Test func smtpRequiresSTARTTLSAndDefaultsToTheSubmissionPort() throws {
        let settings = try Self.settings("smtp://mail.example.com")
        #expect(settings.url == "smtp://mail.example.com:587")
        #expect(settings.requireTLS)
        #expect(!settings.isImplicitTLS)
        #expect(settings.from.value == "noreply@example.com")
        #expect(settings.username == nil && settings.password == nil)
    }

    @Test func smtpsIsTLSFromTheStartOnPort465EvenWhenInsecure() throws {
        let settings = try Self.settings("SMTPS://mail.example.com/", insecure: true)
        #expect(settings.url == "smtps://mail.example.com:465")
        #expect(settings.requireTLS)
        #expect(settings.isImplicitTLS)
    }

    @Test func insecureLiftsTheSTARTTLSRequirementOfSmtp() throws {
        let settings = try Self.settings("smtp://127.0.0.1:2525", insecure: true)
        #expect(settings.url == "smtp://127.0.0.1:2525")
        #expect(!settings.requireTLS)
    }

    @Test func anIPv6HostKeepsItsBrackets() throws {
        #expect(try Self.settings("smtp://[::1]:2525").url == "smtp://[::1]:2525")
    }

    @Test(arguments: [
        ("http://mail.example.com", SMTPSettingsError.Code.scheme), ("mail.example.com:587", .scheme), ("smtpx://h", .scheme),
        ("smtp://", .host), ("smtp://:587", .host), ("smtp://mail example.com", .host), ("smtp://[::1", .host),
        ("smtp://[::1]x", .host), ("smtp://mail.example.com:0", .port), ("smtp://mail.example.com:65536", .port),
        ("smtp://mail.example.com:smtp", .port), ("smtp://mail.example.com:", .port), ("smtp://user:secret@mail.example.com", .url),
        ("smtp://mail.example.com/ehlo", .url), ("smtp://mail.example.com?x=1", .url),
    ])
    func aURLThatIsNotAnSMTPServerIsRefused(url: String, code: SMTPSettingsError.Code) throws {
        let error = #expect(throws: SMTPSettingsError.self) { try Self.settings(url) }
        #expect(error?.code == code)
        #expect(error.map { !$0.message.contains("secret") } == true)
    }

    @Test(arguments: ["", "noreply", "noreply@example.com\r\nBcc: victim@example.com", "Cat <noreply@example.com>"])
    func aSenderThatIsNotAnAddressIsRefused(from: String) throws {
        let error = #expect(throws: SMTPSettingsError.self) { try Self.settings("smtp://mail.example.com", from: from) }
        #expect(error?.code == .from)
    }

    @Test(arguments: ["alice\ns3cret pass\n", "alice\r\ns3cret pass\r\n", "alice\ns3cret pass"])
    func theCredentialsFileHoldsTheUserNameThenThePassword(contents: String) async throws {
        let settings = try await Self.settings("smtps://mail.example.com", credentialsHolding: Array(contents.utf8))
        #expect(settings.username == "alice")
        #expect(settings.password == "s3cret pass")
    }

    @Test func theDescriptionNeverShowsThePassword() async throws {
        let settings = try await Self.settings("smtp://mail.example.com", credentialsHolding: Array("alice\ns3cret\n".utf8))
        #expect(settings.description == "smtp://mail.example.com:587 from noreply@example.com (STARTTLS required, user alice, password hidden)")
        #expect(!"\(settings)".contains("s3cret"))
    }

    @Test func aMissingCredentialsFileIsUnreadable() async throws {
        let path = "/nonexistent/gatehouse-smtp-credentials"
        let error = await #expect(throws: SMTPSettingsError.self) {
            try await offThePool { try Self.settings("smtp://mail.example.com", credentials: path) }
        }
        #expect(error?.code == .credentialsUnreadable)
        #expect(error?.message.contains(path) == true)
    }

    @Test(arguments: [
        "", "alice\n", "alice", "\ns3cret\n", "alice\n\n", "alice\ns3cret\nmore\n", "alice\ns3cret\n\n", "al\u{0}ice\ns3cret\n",
    ])
    func aCredentialsFileThatIsNotTwoLinesIsMalformed(contents: String) async throws {
        let error = await #expect(throws: SMTPSettingsError.self) {
            try await Self.settings("smtp://mail.example.com", credentialsHolding: Array(contents.utf8))
        }
        #expect(error?.code == .credentialsMalformed)
        #expect(error.map { !$0.message.contains("s3cret") } == true)
    }

    @Test func aCredentialsFileThatIsNotUTF8IsMalformed() async throws {
        let error = await #expect(throws: SMTPSettingsError.self) {
            try await Self.settings("smtp://mail.example.com", credentialsHolding: [0x61, 0x0A, 0xFF, 0xFE, 0x0A])
        }
        #expect(error?.code == .credentialsMalformed)
    }

    @Test func anOversizedCredentialsFileIsMalformed() async throws {
        let contents = Array("alice\n".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: SMTPSettings.credentialsBytesMax)
        let error = await #expect(throws: SMTPSettingsError.self) {
            try await Self.settings("smtp://mail.example.com", credentialsHolding: contents)
        }
        #expect(error?.code == .credentialsMalformed)
    }
}
