import CFFmpeg

/// FFmpeg's libraries, loaded at the first video rather than linked: an `rgbd` that reads
/// no video never loads them (nor the hundred-odd codec libraries they depend on).
///
/// CFFmpeg's loader opens the major versions the headers rgbd was built with describe
/// (`libavformat.so.59`, `libavformat.59.dylib`; the directory `RGBD_FFMPEG_DIR` names,
/// when set) and resolves the functions rgbd calls into a table (`rgbd_ffmpeg`), once per
/// process.
enum FFmpegLibraries {
    /// FFmpeg's functions; without the libraries, an error about `path` (the video being
    /// opened) that says what is missing and how to install it.
    static func load(for path: String) throws -> rgbd_ffmpeg {
        guard let table = rgbd_ffmpeg_load() else {
            let why = RGBDError.shown(String(cString: rgbd_ffmpeg_failure()), limit: 200)
            throw RGBDError(.io, file: path,
                            "reading scan videos needs FFmpeg's libraries (\(why)): install them with Scripts/bootstrap.sh"
                                + " (their packages: docs/install.md)")
        }
        return table.pointee
    }
}
