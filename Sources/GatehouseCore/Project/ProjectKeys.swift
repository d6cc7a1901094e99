public import GatehouseBase

/// Which of a project's two keys: the public one that ships inside apps, or the backend's secret.
public enum KeyKind: String, Sendable, CaseIterable {
    case `public`
    case secret

    /// The prefix every key of this kind starts with.
    public var prefix: String {
        switch self {
        case .public: "pk_"
        case .secret: "sk_"
        }
    }
}

/// A freshly made pair of keys, shown once to the operator and never stored.
public struct ProjectKeys: Sendable, Equatable {
    public var publicKey: String
    public var secretKey: String

    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

/// What a project remembers of its keys: only their SHA-256 digests.
public struct KeyDigests: Sendable, Equatable {
    public var publicKey: SecretDigest
    public var secretKey: SecretDigest

    public init(publicKey: SecretDigest, secretKey: SecretDigest) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    public init(_ keys: ProjectKeys) {
        self.init(publicKey: SecretDigest(secret: keys.publicKey), secretKey: SecretDigest(secret: keys.secretKey))
    }

    public subscript(kind: KeyKind) -> SecretDigest {
        get {
            switch kind {
            case .public: publicKey
            case .secret: secretKey
            }
        }
        set {
            switch kind {
            case .public: publicKey = newValue
            case .secret: secretKey = newValue
            }
        }
    }
}

/// How keys look: `pk_<project>_<32 base62>`; the project id makes a key name its project (so the
/// server compares against one stored digest, in constant time, instead of searching by secret),
/// and 32 base62 characters carry 190 random bits.
public enum KeyFormat {
    public static let randomLength = 32

    public static func make(_ kind: KeyKind, project: ProjectID, random: some RandomSource) -> String {
        kind.prefix + project.rawValue + "_" + random.randomToken(alphabet: .base62, length: randomLength)
    }

    /// The kind and project a key claims to belong to, or `nil` when it is not shaped like a key.
    public static func parse(_ key: String) -> (kind: KeyKind, project: ProjectID)? {
        let kind: KeyKind
        if key.hasPrefix(KeyKind.public.prefix) {
            kind = .public
        } else if key.hasPrefix(KeyKind.secret.prefix) {
            kind = .secret
        } else {
            return nil
        }
        let body = key.utf8.dropFirst(3)
        guard body.count > randomLength + 1 else { return nil }
        let projectPart = body.dropLast(randomLength + 1)
        guard body[projectPart.endIndex] == UInt8(ascii: "_"),
            let project = try? ProjectID(validating: String(decoding: projectPart, as: UTF8.self))
        else { return nil }
        return (kind, project)
    }
}
