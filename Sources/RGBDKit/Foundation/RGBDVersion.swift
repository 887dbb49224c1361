/// The version of rgbd.
public enum RGBDVersion {
    /// Semantic version string.
    public static let string = "0.1.0"
}
