extension ProfileDirectory {
    /// Every profile in id order (as ``all``), one at a time: only ids and positions are
    /// sorted, where ``all`` copied a million profiles and moved them around while sorting; the
    /// profiles are then gathered in batches (``Swift/Array/forEachGathered(at:_:)``).
    public func forEachByID(_ body: (Profile) -> Void) {
        var order = profiles.indices.map { (id: profiles[$0].id, position: $0) }
        order.sort { $0.id < $1.id }
        profiles.forEachGathered(at: order.map(\.position), body)
    }
}
