/// The HTTP date format, IMF-fixdate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// From Unix seconds, by arithmetic alone (no formatter, no locale, no time zone).
    public static func format(unixSeconds: Int64) -> String {
        let (days, secondOfDay) = floorDivision(unixSeconds, 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        // 1970-01-01 was a Thursday.
        let weekday = Int(floorDivision(days + 4, 7).remainder)
        var text = "\(weekdays[weekday]), \(twoDigits(day)) \(months[month - 1]) "
        text += String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        text += " \(twoDigits(Int(secondOfDay / 3600))):\(twoDigits(Int(secondOfDay / 60 % 60))):\(twoDigits(Int(secondOfDay % 60))) GMT"
        return text
    }

    /// Year, month (1...12) and day (1...31) of a day counted from 1970-01-01, in the proleptic
    /// Gregorian calendar: Howard Hinnant's `civil_from_days`, which counts in 400-year eras
    /// starting on 1 March so that the leap day falls at the end of each year.
    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468  // days from 0000-03-01
        let era = floorDivision(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097  // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365  // 0...399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0...365, from 1 March
        let monthFromMarch = (5 * dayOfYear + 2) / 153  // 0...11
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}

/// The formatted date of the current second: a loop answers many requests a second.
public struct HTTPDateCache: Sendable {
    private var second: Int64?
    private var text = ""

    public init() {}

    public mutating func string(unixSeconds: Int64) -> String {
        if second != unixSeconds {
            second = unixSeconds
            text = HTTPDate.format(unixSeconds: unixSeconds)
        }
        return text
    }
}
