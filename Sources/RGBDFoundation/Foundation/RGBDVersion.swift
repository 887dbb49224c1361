/// The version of rgbd.
///
/// The top-level `VERSION` file is the one source of the number: the Python package
/// reads it (`python/rgbd/VERSION` links to it; its build ships it as a file), and
/// `RGBDVersionTests` fails when this copy of it differs (Swift cannot read a file when
/// it compiles). The CLI (`--version`), the C ABI (`rgbd_version()`, which
/// Python's `library_version()` calls) and the files rgbd writes all take it from here.
public enum RGBDVersion {
    /// Semantic version string.
    public static let string = staticString.description

    /// The same, in static storage: a C string that is never freed (`rgbd_version()`).
    public static let staticString: StaticString = "0.1.0"
}
