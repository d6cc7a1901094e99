/// A plain-text table: the first column left-aligned, the others right-aligned (numbers).
struct BenchTable {
    let columns: [String]
    private var rows: [[String]] = []

    init(_ columns: [String]) {
        self.columns = columns
    }

    mutating func add(_ row: [String]) {
        precondition(row.count == columns.count, "a row of \(row.count) cells in a table of \(columns.count) columns")
        rows.append(row)
    }

    var text: String {
        let all = [columns] + rows
        let widths = columns.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// Whole numbers for tables: `12345`.
func whole(_ value: Double) -> String {
    value.isFinite ? "\(Int64(value.rounded()))" : "-"
}

/// Microseconds with one decimal from nanoseconds.
func microsecondText(_ nanoseconds: UInt64) -> String {
    decimal(Double(nanoseconds) / 1_000)
}

/// Bytes per second as MB/s (10^6 bytes), one decimal.
func megabytesPerSecond(_ bytes: Int, seconds: Double) -> String {
    seconds > 0 ? decimal(Double(bytes) / seconds / 1e6) : "-"
}

/// Bytes as MiB with one decimal.
func mebibytes(_ bytes: Int) -> String {
    decimal(Double(bytes) / Double(1 << 20))
}
