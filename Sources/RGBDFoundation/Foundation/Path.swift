/// String helpers for file paths ('/'-separated).
package enum Path {
    /// The directory part of a path (`.` when there is none).
    package static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The last component of a path.
    package static func lastComponent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The last component without its extension (`a/b/shot.json` → `shot`).
    package static func stem(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// The extension of the last component, lowercased, without the dot (`""` if none).
    package static func pathExtension(_ path: String) -> String {
        let name = lastComponent(path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...]).lowercased()
    }

    /// `a` + `/` + `b`, without doubling the slash.
    package static func join(_ a: String, _ b: String) -> String {
        if a.isEmpty { return b }
        return a.hasSuffix("/") ? a + b : a + "/" + b
    }

    /// `path` with `.` components and repeated slashes removed and each `..` taking away
    /// the component before it (lexically; an absolute path never climbs above `/`).
    package static func normalized(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var kept: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            if component == "." { continue }
            if component == "..", let last = kept.last, last != ".." {
                kept.removeLast()
            } else if component == ".." && absolute {
                continue
            } else {
                kept.append(component)
            }
        }
        let joined = kept.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    /// Whether `inner` is `outer` or lies inside it (both absolute and normalized, as
    /// `FileSystem.resolvedPath` gives them).
    package static func isSameOrInside(_ inner: String, _ outer: String) -> Bool {
        if inner == outer || outer == "/" { return true }
        return inner.hasPrefix(outer.hasSuffix("/") ? outer : outer + "/")
    }
}
