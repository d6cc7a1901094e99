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
///
/// The public key also exists in the forms RevenueCat's SDKs expect (HTTP.md, "Requests"):
/// `appl_<project>_<random>` for Apple platforms and `goog_<project>_<random>` for Android, with
/// the random part of the `pk_` key. They are spellings of that one key, not keys of their own:
/// nothing more is stored, and rotating the public key replaces all three.
public enum KeyFormat {
    public static let randomLength = 32

    /// The prefixes the public key may be spelled with besides `pk_` (never `test_`, which puts
    /// RevenueCat's SDKs in their simulated store).
    public enum PlatformForm: String, Sendable, CaseIterable {
        case apple = "appl_"
        case google = "goog_"

        /// Its name in a `keys` object.
        public var name: String {
            switch self {
            case .apple: "apple"
            case .google: "google"
            }
        }
    }

    public static func make(_ kind: KeyKind, project: ProjectID, random: some RandomSource) -> String {
        kind.prefix + project.rawValue + "_" + random.randomToken(alphabet: .base62, length: randomLength)
    }

    /// The public key `publicKey` (a `pk_` key) spelled in `form`.
    public static func spell(_ publicKey: String, as form: PlatformForm) -> String {
        precondition(publicKey.hasPrefix(KeyKind.public.prefix), "only the public key has platform forms")
        return form.rawValue + publicKey.dropFirst(KeyKind.public.prefix.count)
    }

    /// A key as it is stored (its digest is of this text): a platform form becomes the `pk_` key
    /// it spells; any other text is itself.
    public static func canonical(_ key: String) -> String {
        for form in PlatformForm.allCases where key.hasPrefix(form.rawValue) {
            return KeyKind.public.prefix + key.dropFirst(form.rawValue.count)
        }
        return key
    }

    /// The kind and project a key claims to belong to, or `nil` when it is not shaped like a key.
    /// A platform form of the public key is the public kind.
    public static func parse(_ key: String) -> (kind: KeyKind, project: ProjectID)? {
        let kind: KeyKind
        let prefixLength: Int
        if key.hasPrefix(KeyKind.secret.prefix) {
            (kind, prefixLength) = (.secret, KeyKind.secret.prefix.utf8.count)
        } else if key.hasPrefix(KeyKind.public.prefix) {
            (kind, prefixLength) = (.public, KeyKind.public.prefix.utf8.count)
        } else if let form = PlatformForm.allCases.first(where: { key.hasPrefix($0.rawValue) }) {
            (kind, prefixLength) = (.public, form.rawValue.utf8.count)
        } else {
            return nil
        }
        let body = key.utf8.dropFirst(prefixLength)
        guard body.count > randomLength + 1 else { return nil }
        let projectPart = body.dropLast(randomLength + 1)
        guard body[projectPart.endIndex] == UInt8(ascii: "_"),
            let project = try? ProjectID(validating: String(decoding: projectPart, as: UTF8.self))
        else { return nil }
        return (kind, project)
    }
}
