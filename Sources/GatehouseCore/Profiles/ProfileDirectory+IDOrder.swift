extension ProfileDirectory {
    /// Every profile in id order (as ``all``), lent one at a time: only ids and positions are
    /// sorted, where ``all`` copied a million profiles (retaining every string and array in
    /// them) and moved them around while sorting.
    public func forEachByID(_ body: (borrowing Profile) -> Void) {
        var order = profiles.indices.map { (id: profiles[$0].id, position: $0) }
        order.sort { $0.id < $1.id }
        profiles.withUnsafeBufferPointer { profiles in
            for entry in order { body(profiles[entry.position]) }
        }
    }
}
