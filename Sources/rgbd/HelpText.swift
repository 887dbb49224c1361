import RGBDKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Help text laid out for the width swift-argument-parser wraps help to.
///
/// The parser re-wraps any line as long as the screen, without a hanging indent, which
/// breaks tables; lines shorter than the screen are kept as they are. So tables are laid
/// out here, at help time, for that width.
enum HelpText {
    /// The width help is printed at: `$COLUMNS`, else standard output's terminal, else 80
    /// (the parser's own rule).
    static var columns: Int {
        if let value = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), value > 0 { return value }
        return Terminal.terminalColumns(of: 1) ?? 80
    }

    /// Rows of `name  description`, descriptions wrapped with a hanging indent, every
    /// line shorter than `columns`. When the screen is too narrow for two columns, each
    /// description goes under its name.
    static func table(_ rows: [(name: String, text: String)], columns: Int = HelpText.columns) -> String {
        let indent = 2
        let nameWidth = (rows.map(\.name.count).max() ?? 0) + 2
        let room = columns - 1
        var lines: [String] = []
        if room - indent - nameWidth >= 24 {
            for row in rows {
                let pad = String(repeating: " ", count: indent + nameWidth - row.name.count - indent)
                let wrapped = wrap(row.text, width: room - indent - nameWidth)
                let hanging = String(repeating: " ", count: indent + nameWidth)
                for (i, line) in wrapped.enumerated() {
                    lines.append(i == 0 ? String(repeating: " ", count: indent) + row.name + pad + line : hanging + line)
                }
            }
        } else {
            let deeper = indent + 4
            for row in rows {
                lines.append(String(repeating: " ", count: indent) + row.name)
                for line in wrap(row.text, width: max(10, room - deeper)) {
                    lines.append(String(repeating: " ", count: deeper) + line)
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `text` broken at spaces into lines of at most `width` characters (a longer word
    /// is cut into pieces of `width`).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        let words = text.split(separator: " ").flatMap { word -> [Substring] in
            guard word.count > width, width > 0 else { return [word] }
            return stride(from: 0, to: word.count, by: width).map { start in
                let from = word.index(word.startIndex, offsetBy: start)
                return word[from..<(word.index(from, offsetBy: width, limitedBy: word.endIndex) ?? word.endIndex)]
            }
        }
        for word in words {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
