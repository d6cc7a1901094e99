import GatehouseBase
import GatehouseCore

/// What web sales keep beside their purchases (docs/data-format.md, "Web purchases"): the
/// pending owners, in purchase key order, each as store, id and profile id.
enum WebCoding {
    static func write(_ web: WebPurchases, into writer: inout ByteWriter) {
        writer.writeArray(web.pendingOwners.sorted { $0.key < $1.key }) { writer, entry in
            writePendingOwner(entry.key, entry.value, into: &writer)
        }
    }

    static func read(_ reader: inout ByteReader) throws(ByteReaderError) -> WebPurchases {
        let start = reader.offset
        let entries = try reader.readArray { reader throws(ByteReaderError) in try readPendingOwner(&reader) }
        var pending: [PurchaseKey: ProfileID] = [:]
        for (key, id) in entries {
            guard pending.updateValue(id, forKey: key) == nil else { throw ByteReaderError.invalid("a purchase pending twice", at: start) }
        }
        return WebPurchases(pendingOwners: pending)
    }

    static func writePendingOwner(_ key: PurchaseKey, _ id: ProfileID, into writer: inout ByteWriter) {
        writer.writeString(key.store)
        writer.writeString(key.id)
        ProfileCoding.writeID(id, into: &writer)
    }

    static func readPendingOwner(_ reader: inout ByteReader) throws(ByteReaderError) -> (PurchaseKey, ProfileID) {
        let key = PurchaseKey(store: try reader.readString(), id: try reader.readString())
        return (key, try ProfileCoding.readID(&reader))
    }
}
