/// Stray Scanner's text tables: `odometry.csv` (a pose per frame), `camera_matrix.csv`
/// (the color camera's K) and `imu.csv`. Pure functions of the files' bytes, so the
/// fuzz target `FuzzOdometry` drives them directly.
package enum StrayTables {
    /// Which layout of `odometry.csv` a scan has (docs/scans.md).
    package enum OdometryVariant: String, Sendable {
        /// No header; `x, y, z, qx, qy, qz, qw` (before 2021-08).
        case legacy = "7 columns, no header (before 2021-08)"
        /// `timestamp, frame, x, y, z, qx, qy, qz, qw`.
        case nine = "9 columns with timestamps and frame numbers"
        /// The 9 columns and `fx, fy, cx, cy, distortion_center_x, distortion_center_y`.
        case fifteen = "15 columns with per-frame intrinsics (2026)"
    }

    /// One row of `odometry.csv`.
    package struct OdometryRow: Sendable {
        /// The frame it belongs to (its depth file `depth/NNNNNN.png` and video frame).
        package var frame: Int
        /// Seconds (the device's clock); nil in the legacy layout.
        package var timestamp: Double?
        /// Camera-to-world, OpenCV camera axes (the app's own convention).
        package var pose: Pose
        /// Per-frame `fx, fy, cx, cy` at the color size (15-column layout).
        package var intrinsics: (fx: Double, fy: Double, cx: Double, cy: Double)?
        /// The lens-distortion centre at the color size, when the row gives one.
        package var distortionCenter: SIMD2<Double>?
        /// The line in the file, for messages.
        package var line: Int
    }

    /// The most rows read: an hour at 60 fps is 216 000.
    package static let maxRows = 2_000_000

    /// Parses `odometry.csv`; `name` names it in errors.
    ///
    /// - Throws: `RGBDError(.invalidScene)` naming the file and line: a header without the
    ///   pose columns, a row with missing or extra fields, a number that is not finite, a
    ///   quaternion that is not a rotation, frame numbers that do not increase.
    package static func odometry(_ bytes: [UInt8], name: String) throws
        -> (variant: OdometryVariant, rows: [OdometryRow]) {
        let table = try CSVTable(bytes, name: name)
        guard let first = table.rows.first else {
            throw RGBDError(.invalidScene, file: name, "no poses (the file is empty)")
        }
        guard table.rows.count <= maxRows else {
            throw RGBDError(.invalidScene, file: name, "\(table.rows.count) rows, more than rgbd reads (\(maxRows))")
        }
        let hasHeader = first.fields.contains { field in field.contains { $0.isLetter } && Double(field) == nil }
        var columns: [String: Int] = [:]
        let variant: OdometryVariant
        if hasHeader {
            for (i, field) in first.fields.enumerated() { columns[String(field)] = i }
            for key in ["x", "y", "z", "qx", "qy", "qz", "qw"] where columns[key] == nil {
                throw RGBDError(.invalidScene, file: name, location: "line \(first.line)",
                                "the header has no column \"\(key)\" (it has: \(RGBDError.shown(first.fields.joined(separator: ", "), limit: 120)))")
            }
            variant = columns["fx"] != nil ? .fifteen : .nine
        } else {
            for (i, key) in ["x", "y", "z", "qx", "qy", "qz", "qw"].enumerated() { columns[key] = i }
            variant = .legacy
        }
        let width = hasHeader ? first.fields.count : 7
        var rows: [OdometryRow] = []
        rows.reserveCapacity(table.rows.count)
        for row in table.rows.dropFirst(hasHeader ? 1 : 0) {
            guard row.fields.count == width else {
                throw RGBDError(.invalidScene, file: name, location: "line \(row.line)",
                                "\(row.fields.count) fields where \(hasHeader ? "the header has" : "the 7-column layout has") \(width)")
            }
            func value(_ key: String) throws -> Double? {
                guard let column = columns[key] else { return nil }
                return try CSVTable.number(row, column, name: name, what: key)
            }
            func optional(_ key: String) throws -> Double? {
                guard let column = columns[key], !row.fields[column].isEmpty else { return nil }
                return try CSVTable.number(row, column, name: name, what: key)
            }
            let frame: Int
            if let column = columns["frame"] {
                guard let n = Int(row.fields[column]), n >= 0, n < 100_000_000 else {
                    throw RGBDError(.invalidScene, file: name, location: "line \(row.line)",
                                    "frame \"\(RGBDError.shown(row.fields[column]))\" is not a frame number")
                }
                frame = n
            } else {
                frame = rows.count
            }
            if let previous = rows.last, frame <= previous.frame {
                throw RGBDError(.invalidScene, file: name, location: "line \(row.line)",
                                "frame \(frame) follows frame \(previous.frame): frame numbers must increase")
            }
            let q = (x: try value("qx") ?? 0, y: try value("qy") ?? 0, z: try value("qz") ?? 0, w: try value("qw") ?? 0)
            let t = SIMD3(try value("x") ?? 0, try value("y") ?? 0, try value("z") ?? 0)
            guard let pose = Pose(quaternionX: q.x, y: q.y, z: q.z, w: q.w, translation: t) else {
                let norm = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).squareRoot()
                throw RGBDError(.invalidScene, file: name, location: "line \(row.line) (frame \(frame))",
                                "the quaternion (qx, qy, qz, qw) has norm \(DecimalText.fixed(norm, 4)), not a rotation")
            }
            var intrinsics: (fx: Double, fy: Double, cx: Double, cy: Double)?
            if let fx = try optional("fx"), let fy = try optional("fy"), let cx = try optional("cx"), let cy = try optional("cy") {
                guard fx > 0, fy > 0 else {
                    throw RGBDError(.invalidScene, file: name, location: "line \(row.line) (frame \(frame))",
                                    "focal lengths must be positive (fx \(fx), fy \(fy))")
                }
                intrinsics = (fx, fy, cx, cy)
            }
            var center: SIMD2<Double>?
            if let x = try optional("distortion_center_x"), let y = try optional("distortion_center_y") {
                center = SIMD2(x, y)
            }
            rows.append(OdometryRow(frame: frame, timestamp: try value("timestamp"), pose: pose,
                                    intrinsics: intrinsics, distortionCenter: center, line: row.line))
        }
        guard !rows.isEmpty else {
            throw RGBDError(.invalidScene, file: name, "a header and no poses")
        }
        return (variant, rows)
    }

    /// Parses `camera_matrix.csv`: three rows of three numbers, an upper-triangular K
    /// with positive focal lengths. Returns `fx, fy, cx, cy`.
    package static func cameraMatrix(_ bytes: [UInt8], name: String) throws -> (fx: Double, fy: Double, cx: Double, cy: Double) {
        let table = try CSVTable(bytes, name: name)
        guard table.rows.count == 3, table.rows.allSatisfy({ $0.fields.count == 3 }) else {
            throw RGBDError(.invalidScene, file: name,
                            "not a 3×3 matrix (\(table.rows.count) rows of \(table.rows.map { String($0.fields.count) }.joined(separator: ", ")) fields)")
        }
        var m: [Double] = []
        for row in table.rows {
            for column in 0..<3 { m.append(try CSVTable.number(row, column, name: name, what: "entry \(column + 1)")) }
        }
        guard m[3] == 0, m[6] == 0, m[7] == 0, m[8] == 1, m[0] > 0, m[4] > 0 else {
            throw RGBDError(.invalidScene, file: name,
                            "not an intrinsic matrix (rows fx 0 cx / 0 fy cy / 0 0 1 with positive focal lengths)")
        }
        return (m[0], m[4], m[2], m[5])
    }

    /// What `imu.csv` says, summarised.
    package struct IMUSummary: Sendable {
        /// Samples read.
        package var count: Int
        /// Samples per second, from the timestamps; nil with fewer than two.
        package var rate: Double?
        /// Whether accelerations are in g (newer app versions) rather than m/s².
        package var inG: Bool
        /// The mean acceleration in m/s², device axes.
        package var meanAcceleration: SIMD3<Double>
    }

    /// Parses `imu.csv` (`timestamp, a_x, a_y, a_z, alpha_x, alpha_y, alpha_z`, a header
    /// line): the unit of acceleration is told by its magnitude (|a| near 9.8 is m/s²,
    /// near 1 is g).
    package static func imu(_ bytes: [UInt8], name: String) throws -> IMUSummary {
        let table = try CSVTable(bytes, name: name)
        var rows = table.rows[...]
        if let first = rows.first, first.fields.contains(where: { Double($0) == nil }) { rows = rows.dropFirst() }
        var sum = SIMD3<Double>.zero, magnitudes = 0.0
        var firstTime: Double?, lastTime: Double?
        var count = 0
        for row in rows {
            guard row.fields.count >= 4 else {
                throw RGBDError(.invalidScene, file: name, location: "line \(row.line)",
                                "\(row.fields.count) fields, fewer than timestamp and 3 accelerations")
            }
            let time = try CSVTable.number(row, 0, name: name, what: "timestamp")
            let a = SIMD3(try CSVTable.number(row, 1, name: name, what: "a_x"),
                          try CSVTable.number(row, 2, name: name, what: "a_y"),
                          try CSVTable.number(row, 3, name: name, what: "a_z"))
            sum += a
            magnitudes += (a * a).sum().squareRoot()
            if firstTime == nil { firstTime = time }
            lastTime = time
            count += 1
        }
        guard count > 0 else { throw RGBDError(.invalidScene, file: name, "no samples") }
        let meanMagnitude = magnitudes / Double(count)
        let inG = meanMagnitude < 3
        var rate: Double?
        if count > 1, let firstTime, let lastTime, lastTime > firstTime {
            rate = Double(count - 1) / (lastTime - firstTime)
        }
        return IMUSummary(count: count, rate: rate, inG: inG, meanAcceleration: sum / Double(count) * (inG ? 9.80665 : 1))
    }
}
