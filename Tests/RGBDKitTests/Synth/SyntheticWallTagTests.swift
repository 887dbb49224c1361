import RGBDKit
import RGBDSynth
import Testing

/// The AprilTags `rgbd-synth scan --wall-tags` prints on the room's walls: a frame of the
/// default path that faces them decodes them, with their IDs, where the room says they
/// are (each corner at its true projection), readable from inside the room.
@Suite struct SyntheticWallTagTests {
    /// A tag-frame point (x right, y down as seen from inside the room, meters from the
    /// black square's centre) on its wall, in the room's world.
    static func world(_ tag: SyntheticRoom.WallTag, _ p: SIMD3<Double>, room: SyntheticRoom) -> SIMD3<Double> {
        let (along, height) = (tag.center.x, tag.center.y - p.y)
        switch tag.wall {
        case 0: return SIMD3(room.minCorner.x, height, along - p.x)
        case 1: return SIMD3(room.maxCorner.x, height, along + p.x)
        case 2: return SIMD3(along + p.x, height, room.minCorner.z)
        default: return SIMD3(along - p.x, height, room.maxCorner.z)
        }
    }

    @Test func wallTagsDecodeWhereTheRoomHasThem() {
        var scan = SyntheticScan(frameCount: 300, colorWidth: 960, colorHeight: 720)
        scan.room.wallTags = SyntheticRoom.taggedWalls()
        #expect(scan.room.wallTags.map(\.id) == [0, 1, 2, 3, 4])
        // Frames 0 (wall 3 ahead) and 210 (wall 2 ahead) of the default path.
        var found: Set<Int> = []
        for index in [0, 210] {
            let frame = scan.render(frame: index)
            let k = frame.colorCamera, toCamera = frame.pose.inverse
            let tags = TagDetector().detect(frame.color).tags
            for detection in tags {
                // No ID the room does not have.
                let tag = scan.room.wallTags.first { $0.id == detection.id }
                #expect(tag != nil, "tag \(detection.id) decoded in frame \(index)")
                guard let tag else { continue }
                found.insert(tag.id)
                let truth = TagDetection.modelCorners(size: tag.size).map { corner -> SIMD2<Double> in
                    let q = toCamera.apply(Self.world(tag, corner, room: scan.room))
                    return SIMD2(k.fx * q.x / q.z + k.cx, k.fy * q.y / q.z + k.cy)
                }
                for (seen, expected) in zip(detection.corners, truth) {
                    let d = seen - expected
                    #expect((d * d).sum().squareRoot() < 1.5, "tag \(tag.id) in frame \(index): corner \(seen), true \(expected)")
                }
            }
        }
        print("wall tags decoded in frames 0 and 210: \(found.sorted())")
        // Tag 0 faces frame 0, tag 4 frame 210.
        #expect(found.isSuperset(of: [0, 4]))
    }
}
