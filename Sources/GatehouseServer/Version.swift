/// The version this build reports in `hello` and `--version`.
public enum GatehouseVersion {
    public static let current = "0.1.0"
    public static let serverString = "gatehouse/\(current)"
}
