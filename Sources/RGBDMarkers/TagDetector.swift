import CAprilTag

/// The AprilTag families rgbd reads.
package enum TagFamily: String, CaseIterable, Sendable {
    /// 36-bit codes, minimum Hamming distance 11, 587 IDs: the common printed family (default).
    case tag36h11
    /// 41-bit codes, minimum Hamming distance 12, 2115 IDs, data bits around the border too.
    case tagStandard41h12

    /// The edge of the black square (the `tagSize` rgbd measures) over the edge of the whole
    /// pattern including its outer white ring, both in cells: 8/10 for tag36h11, 5/9 for
    /// tagStandard41h12.
    package var borderCells: Int { self == .tag36h11 ? 8 : 5 }
    /// The whole pattern's edge in cells (see `borderCells`).
    package var totalCells: Int { self == .tag36h11 ? 10 : 9 }
}

/// One tag found in an image: its ID and the corners of its black square.
package struct TagDetection: Equatable, Sendable {
    /// The family it was decoded in.
    package var family: TagFamily
    /// The decoded ID.
    package var id: Int
    /// The black square's corners in rgbd's pixel convention (integer coordinates are pixel
    /// centres), in the tag's own order: the corners at tag coordinates `(−s/2, +s/2)`,
    /// `(+s/2, +s/2)`, `(+s/2, −s/2)`, `(−s/2, −s/2)` (tag frame: x right, y down, z into the
    /// tag; seen upright that is left-bottom, right-bottom, right-top, left-top).
    package var corners: [SIMD2<Double>]
    /// The tag's centre in the image (where its diagonals cross), rgbd's pixel convention.
    package var center: SIMD2<Double>
    /// The decoder's decision margin: how clearly the darkest data bit was dark and the
    /// lightest light (larger is cleaner).
    package var decisionMargin: Double
    /// True when another tag with the same ID and family is in the same image (such tags
    /// are reported but never used to register).
    package var duplicateID = false

    /// The tag's corners in its own frame for a black square of edge `size`, in the order of
    /// `corners`.
    package static func modelCorners(size: Double) -> [SIMD3<Double>] {
        let h = size / 2
        return [SIMD3(-h, h, 0), SIMD3(h, h, 0), SIMD3(h, -h, 0), SIMD3(-h, -h, 0)]
    }
}

/// What the detector refuses, for `rgbd info`: a decoded tag that is not clean.
package struct RejectedTag: Error, Equatable, Sendable {
    /// The decoded ID.
    package var id: Int
    /// Why it was left out, in words.
    package var reason: String
}

/// AprilTag 3 over rectified color: finds tags and keeps only clean decodes (no corrected
/// bit, a decision margin at least `minimumDecisionMargin`, the whole printed pattern
/// inside the image).
///
/// The library's detector is not safe to share: use one `TagDetector` per thread. Corners
/// come out in rgbd's pixel convention: the library puts the centre of the top-left pixel
/// at (0.5, 0.5) (its corners are unbiased that way with edge refinement on), rgbd at
/// (0, 0), so half a pixel is subtracted.
package final class TagDetector {
    /// The family it decodes.
    package let family: TagFamily
    /// The smallest decision margin kept (the library reports margins well above 100 for a
    /// clear print; ghosts in texture stay below a few tens).
    package let minimumDecisionMargin: Double
    private let detector: UnsafeMutablePointer<apriltag_detector_t>
    private let familyTable: UnsafeMutablePointer<apriltag_family_t>

    /// The default decision-margin floor.
    package static let defaultMinimumDecisionMargin = 30.0

    /// A detector for `family`, decimating by 2 for quad finding with edge refinement on
    /// (the library's defaults, under which its corners are unbiased), with `threads` of the
    /// library's worker threads (nil, the default: one per processor; the detections are
    /// the same for any number).
    package init(family: TagFamily = .tag36h11, minimumDecisionMargin: Double = TagDetector.defaultMinimumDecisionMargin,
                threads: Int? = nil) {
        self.family = family
        self.minimumDecisionMargin = minimumDecisionMargin
        switch family {
        case .tag36h11: familyTable = tag36h11_create()
        case .tagStandard41h12: familyTable = tagStandard41h12_create()
        }
        detector = apriltag_detector_create()
        detector.pointee.nthreads = Int32(max(1, min(threads ?? Host.processorCount, 64)))
        detector.pointee.quad_decimate = 2
        detector.pointee.quad_sigma = 0
        detector.pointee.refine_edges = true
        // Only exact decodes are kept, so the decoder need not look for corrected ones
        // (which also keeps its lookup table small).
        apriltag_detector_add_family_bits(detector, familyTable, 0)
    }

    deinit {
        apriltag_detector_destroy(detector)
        switch family {
        case .tag36h11: tag36h11_destroy(familyTable)
        case .tagStandard41h12: tagStandard41h12_destroy(familyTable)
        }
    }

    /// The clean tags in `image` (8-bit RGB, converted to gray here, or 8-bit gray), sorted
    /// by ID, and the decodes left out with the reason. Two clean tags with the same ID are
    /// both kept, marked `duplicateID`.
    package func detect(_ image: ColorImage) -> (tags: [TagDetection], rejected: [RejectedTag]) {
        var gray = image.channels == 1 ? image.samples : Self.gray(image)
        let detections: [TagDetection] = gray.withUnsafeMutableBufferPointer { buffer in
            var im = image_u8_t(width: Int32(image.width), height: Int32(image.height), stride: Int32(image.width),
                                buf: buffer.baseAddress)
            guard let found = apriltag_detector_detect(detector, &im) else { return [] }
            defer { apriltag_detections_destroy(found) }
            var out: [TagDetection] = []
            for i in 0..<zarray_size(found) {
                var pointer: UnsafeMutablePointer<apriltag_detection_t>? = nil
                zarray_get(found, i, &pointer)
                guard let d = pointer?.pointee, d.hamming == 0 else { continue }
                let p = d.p
                let raw = [SIMD2(p.0.0, p.0.1), SIMD2(p.1.0, p.1.1), SIMD2(p.2.0, p.2.1), SIMD2(p.3.0, p.3.1)]
                out.append(TagDetection(family: family, id: Int(d.id), corners: raw.map { $0 - 0.5 },
                                        center: SIMD2(d.c.0, d.c.1) - 0.5, decisionMargin: Double(d.decision_margin)))
            }
            return out
        }
        var tags: [TagDetection] = [], rejected: [RejectedTag] = []
        for tag in detections {
            if tag.decisionMargin < minimumDecisionMargin {
                rejected.append(RejectedTag(id: tag.id, reason: "decision margin \(Int(tag.decisionMargin)) below \(Int(minimumDecisionMargin))"))
            } else if !Self.patternInside(tag, family: family, width: image.width, height: image.height) {
                rejected.append(RejectedTag(id: tag.id, reason: "cut by the image border"))
            } else {
                tags.append(tag)
            }
        }
        for i in tags.indices where tags.indices.contains(where: { $0 != i && tags[$0].id == tags[i].id }) {
            tags[i].duplicateID = true
        }
        tags.sort { ($0.id, $0.center.y, $0.center.x) < ($1.id, $1.center.y, $1.center.x) }
        return (tags, rejected)
    }

    /// True when the whole printed pattern (the black square grown to the outer white ring,
    /// a projective extrapolation of the corners from the centre) lies at least one pixel
    /// inside the image: a tag whose ring is cut has corners the library guesses.
    static func patternInside(_ tag: TagDetection, family: TagFamily, width: Int, height: Int) -> Bool {
        let grow = Double(family.totalCells) / Double(family.borderCells)
        return tag.corners.allSatisfy { corner in
            let q = tag.center + (corner - tag.center) * grow
            return q.x >= 0.5 && q.y >= 0.5 && q.x <= Double(width) - 1.5 && q.y <= Double(height) - 1.5
        }
    }

    /// Luma of an RGB image (BT.601 weights in 8-bit fixed point).
    static func gray(_ image: ColorImage) -> [UInt8] {
        let count = image.width * image.height
        var gray = [UInt8](repeating: 0, count: count)
        image.samples.withUnsafeBufferPointer { rgb in
            gray.withUnsafeMutableBufferPointer { out in
                for i in 0..<count {
                    let r = UInt32(rgb[3 * i]), g = UInt32(rgb[3 * i + 1]), b = UInt32(rgb[3 * i + 2])
                    out[i] = UInt8(truncatingIfNeeded: (77 * r + 150 * g + 29 * b + 128) >> 8)
                }
            }
        }
        return gray
    }
}
