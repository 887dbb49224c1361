/// A small comma-separated table as the iPhone scan apps write them (`odometry.csv`,
/// `camera_matrix.csv`, `imu.csv`): lines of fields separated by `,`, spaces around fields
/// ignored, `\n` or `\r\n` line ends (`lines`), a UTF-8 byte order mark at the start
/// skipped, blank lines skipped. No quoting (none of those files quote). Bounded: a file is
/// read whole with the bounded reader, lines and fields are slices of it.
package struct CSVTable: Sendable {
    /// One line: its 1-based line number in the file and its fields, trimmed.
    package struct Row: Sendable {
        /// The line's number in the file, from 1 (for messages).
        package let line: Int
        /// The fields, spaces trimmed; empty strings for empty fields.
        package let fields: [Substring]
    }

    /// The non-blank lines.
    package let rows: [Row]

    /// The most fields a line may have: the widest real file (Stray Scanner's 2026
    /// odometry) has 15; more means the file is not one of these tables.
    package static let maxFields = 64

    /// Splits `bytes` (UTF-8 text) into rows; `name` names the file in errors.
    ///
    /// - Throws: `RGBDError(.invalidScene)` for bytes that are not text or a line with more
    ///   than `maxFields` fields.
    package init(_ bytes: [UInt8], name: String) throws {
        guard !bytes.contains(0) else {
            throw RGBDError(.invalidScene, file: name, "not a text table (it holds NUL bytes)")
        }
        var rows: [Row] = []
        for (lineNumber, trimmedLine) in Self.lines(bytes) {
            if trimmedLine.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            let fields = trimmedLine.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count <= Self.maxFields else {
                throw RGBDError(.invalidScene, file: name, location: "line \(lineNumber)",
                                "\(fields.count) fields, more than any scan table has (\(Self.maxFields))")
            }
            rows.append(Row(line: lineNumber, fields: fields.map(Self.trim)))
        }
        self.rows = rows
    }

    /// The UTF-8 byte order mark, which spreadsheets and Python's `utf-8-sig` codec write
    /// at the start of a text file.
    package static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The lines of a text file with their 1-based numbers: split at `\n`, a `\r` before
    /// the `\n` dropped (Windows, spreadsheets and Python's `csv` module end lines with
    /// `\r\n`), a UTF-8 byte order mark at the very start skipped. Every comma-separated
    /// file rgbd reads (these tables, `--placemarks`) is split here, so they all take the
    /// same files.
    package static func lines(_ bytes: [UInt8]) -> [(number: Int, text: Substring)] {
        let body = bytes.starts(with: byteOrderMark) ? bytes.dropFirst(byteOrderMark.count) : bytes[...]
        // Split on the bytes: in a Swift String "\r\n" is one character, so splitting a
        // String at "\n" would leave a CRLF file one line.
        return body.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated().map { index, line in
            let content = line.last == 0x0D ? line.dropLast() : line
            return (index + 1, Substring(String(decoding: content, as: UTF8.self)))
        }
    }

    private static func trim(_ field: Substring) -> Substring {
        var s = field
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return s
    }

    /// A field as a finite number, or an error naming the file, line and column.
    package static func number(_ row: Row, _ column: Int, name: String, what: String) throws -> Double {
        guard column < row.fields.count else {
            throw RGBDError(.invalidScene, file: name, location: "line \(row.line)", "no \(what) (column \(column + 1))")
        }
        let field = row.fields[column]
        guard let value = Double(field), value.isFinite else {
            let shown = field.isEmpty ? "an empty field" : "\"\(RGBDError.shown(field))\""
            throw RGBDError(.invalidScene, file: name, location: "line \(row.line)",
                            "\(what) is \(shown), not a finite number")
        }
        return value
    }
}
