/// What kind of address an IP address is, for ``OutboundRequest/AddressPolicy/publicOnly``: the
/// IANA special-purpose ranges a request to a user's URL must not reach.
public enum AddressClass: String, Sendable, CaseIterable {
    case publicAddress = "public"
    /// 127/8, ::1.
    case loopback
    /// 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT), fc00::/7 (unique local).
    case privateAddress = "private"
    /// 169.254/16, fe80::/10.
    case linkLocal = "link-local"
    /// 224/4, ff00::/8.
    case multicast
    /// 0/8 ("this network", which Linux connects to the host itself), ::.
    case unspecified
    /// 255.255.255.255.
    case broadcast

    public var isPublic: Bool { self == .publicAddress }

    /// The class of an address given as its 4 (IPv4) or 16 (IPv6) bytes in network order;
    /// `nil` for any other length. An IPv6 address that embeds an IPv4 one (`::ffff:a.b.c.d`)
    /// is of the IPv4 address's class.
    public static func of(_ bytes: [UInt8]) -> AddressClass? {
        switch bytes.count {
        case 4: ofIPv4(bytes[0], bytes[1], bytes[2], bytes[3])
        case 16: ofIPv6(bytes)
        default: nil
        }
    }

    private static func ofIPv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> AddressClass {
        switch (a, b) {
        case (0, _): .unspecified
        case (127, _): .loopback
        case (10, _), (172, 16...31), (192, 168), (100, 64...127): .privateAddress
        case (169, 254): .linkLocal
        case (224...239, _): .multicast
        case (255, 255) where c == 255 && d == 255: .broadcast
        default: .publicAddress
        }
    }

    private static func ofIPv6(_ bytes: [UInt8]) -> AddressClass {
        if bytes[0..<15].allSatisfy({ $0 == 0 }), bytes[15] <= 1 { return bytes[15] == 1 ? .loopback : .unspecified }
        if let embedded = embeddedIPv4(bytes) { return ofIPv4(embedded[0], embedded[1], embedded[2], embedded[3]) }
        switch bytes[0] {
        case 0xFF: return .multicast
        case 0xFC, 0xFD: return .privateAddress
        case 0xFE where bytes[1] & 0xC0 == 0x80: return .linkLocal
        default: return .publicAddress
        }
    }

    /// The IPv4 address an IPv6 one stands for: IPv4-mapped (`::ffff:0:0/96`), the deprecated
    /// IPv4-compatible form (`::/96`) and NAT64's well-known prefix (`64:ff9b::/96`) all lead
    /// to it.
    private static func embeddedIPv4(_ bytes: [UInt8]) -> [UInt8]? {
        let prefix = bytes[0..<12]
        let mapped = prefix.elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF])
        let compatible = prefix.allSatisfy { $0 == 0 }
        let nat64 = prefix.elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0])
        return mapped || compatible || nat64 ? Array(bytes[12..<16]) : nil
    }
}
