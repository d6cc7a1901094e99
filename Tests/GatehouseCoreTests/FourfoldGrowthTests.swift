@testable import GatehouseCore
import Testing

/// ``Swift/Array/reserveForAppend(_:)``: big full arrays grow fourfold, small ones as Swift grows them.
@Suite struct FourfoldGrowth {
    @Test func aFullArrayOfAMebibyteOrMoreGrowsFourfold() {
        var bytes = [UInt8]()
        bytes.reserveCapacity(Array<UInt8>.fourfoldGrowthBytes)
        bytes.append(contentsOf: repeatElement(7, count: bytes.capacity))
        let full = bytes.capacity
        bytes.reserveForAppend(1)
        #expect(bytes.capacity >= 4 * full)
        #expect(bytes.count == full && bytes.allSatisfy { $0 == 7 }, "the elements stay")
    }

    @Test func anArrayWithRoomOrUnderAMebibyteIsLeftAlone() {
        var small = [UInt64](repeating: 1, count: 1000)
        let smallCapacity = small.capacity
        small.reserveForAppend(small.capacity - small.count + 1)
        #expect(small.capacity == smallCapacity, "Swift's own growth applies on append")

        var roomy = [UInt8]()
        roomy.reserveCapacity(2 * Array<UInt8>.fourfoldGrowthBytes)
        roomy.append(contentsOf: repeatElement(0, count: Array<UInt8>.fourfoldGrowthBytes))
        let roomyCapacity = roomy.capacity
        roomy.reserveForAppend(10)
        #expect(roomy.capacity == roomyCapacity)
    }
}
