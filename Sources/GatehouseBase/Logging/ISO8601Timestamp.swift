/// Formats instants as UTC ISO-8601 with milliseconds (`2026-11-29T22:41:03.123Z`), without
/// Foundation: log formatting runs on every record and needs no calendar beyond the
/// proleptic Gregorian one.
public enum ISO8601Timestamp {
    /// Formats `sinceEpoch` (a wall-clock instant relative to 1970-01-01T00:00:00Z),
    /// truncating to whole milliseconds. Instants before the epoch are formatted correctly too.
    public static func format(_ sinceEpoch: Duration) -> String {
        let milliseconds = wholeMilliseconds(sinceEpoch)
        let (days, millisecondOfDay) = floorDivide(milliseconds, 86_400_000)
        let date = civilDate(daysSinceEpoch: days)
        let (secondOfDay, millisecond) = floorDivide(millisecondOfDay, 1000)

        var text = padded(date.year, width: 4)
        text += "-" + padded(date.month, width: 2)
        text += "-" + padded(date.day, width: 2)
        text += "T" + padded(secondOfDay / 3600, width: 2)
        text += ":" + padded(secondOfDay / 60 % 60, width: 2)
        text += ":" + padded(secondOfDay % 60, width: 2)
        text += "." + padded(millisecond, width: 3) + "Z"
        return text
    }

    static func wholeMilliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        // Attoseconds carry the sign of the duration; floor so -0.5 ms lands in the previous ms.
        let (milliseconds, _) = floorDivide(attoseconds, 1_000_000_000_000_000)
        return seconds * 1000 + milliseconds
    }

    /// Howard Hinnant's `civil_from_days`: exact for every day count an Int64 of
    /// milliseconds can reach, with no tables and no loops.
    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days from 0000-03-01, so leap days fall at era ends
        let (era, dayOfEra) = floorDivide(shifted, 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func floorDivide<T: BinaryInteger>(_ value: T, _ divisor: T) -> (quotient: T, remainder: T) {
        var (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    private static func padded(_ value: Int64, width: Int) -> String {
        let digits = String(value.magnitude)
        let zeros = String(repeating: "0", count: max(0, width - digits.count))
        return (value < 0 ? "-" : "") + zeros + digits
    }
}
