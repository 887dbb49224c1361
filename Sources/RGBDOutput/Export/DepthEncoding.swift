/// Conversions of depth maps to the integer encodings datasets use.
package enum DepthEncoding {
    /// Depth in millimeters as 16-bit integers, the TUM RGB-D / Open3D convention
    /// (`depth_scale = 1000`): `round(1000·d)`, 0 = no depth. Depths that do not fit
    /// (at or beyond 65.5355 m) also become 0: clamping would invent a wrong distance.
    package static func millimeters(_ depth: DepthMap) -> [UInt16] {
        depth.samples.map { d in
            guard d.isFinite, d > 0 else { return 0 }
            let mm = (d * 1000).rounded()
            return mm >= 1 && mm <= 65535 ? UInt16(mm) : 0
        }
    }
}
