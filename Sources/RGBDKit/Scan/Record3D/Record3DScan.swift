// TEMPORARY (not to be committed): stands in until the ZIP/LZFSE/EXR readers are merged.
enum Record3DScan {
    static func openArchive(_ path: String) throws -> Scene { throw RGBDError(.io, file: path, "not merged yet") }
    static func openExport(_ path: String) throws -> Scene { throw RGBDError(.io, file: path, "not merged yet") }
}
