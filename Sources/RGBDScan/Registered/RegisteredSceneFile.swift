/// The scene `rgbd register` writes: `scene.json` in the output folder, naming each
/// registered capture (absolute paths) with its camera-to-world pose in the tags' world,
/// its rectified intrinsics and the depth correction tags gave it
/// (docs/markers.md). `Scene.open` reads it back (`RegisteredScene`).
package struct RegisteredSceneFile: Sendable {
    /// One registered capture.
    package struct Frame: Sendable {
        /// The capture JSON (or Portrait photo), absolute.
        package var capture: String
        /// Its photo, absolute.
        package var image: String
        /// Camera-to-world, OpenCV camera axes.
        package var pose: Pose
        /// Rectified color intrinsics (at the color size).
        package var colorIntrinsics: Intrinsics
        /// Rectified depth intrinsics (at the depth size).
        package var depthIntrinsics: Intrinsics
        /// The metric correction of its depth (factor 1, offset 0 when none).
        package var depthFactor: Double = 1
        /// See `depthFactor`: the disparity offset, 1/meters.
        package var disparityOffset: Double = 0

        /// Each stored property given.
        package init(capture: String, image: String, pose: Pose, colorIntrinsics: Intrinsics, depthIntrinsics: Intrinsics, depthFactor: Double = 1, disparityOffset: Double = 0) {
            self.capture = capture
            self.image = image
            self.pose = pose
            self.colorIntrinsics = colorIntrinsics
            self.depthIntrinsics = depthIntrinsics
            self.depthFactor = depthFactor
            self.disparityOffset = disparityOffset
        }
    }

    /// The file's name inside the scene folder.
    package static let name = "scene.json"
    /// The value of the first key, `rgbd_scene`, by which the file is recognised.
    package static let kind = "registered captures"

    /// The tag family.
    package var family: TagFamily
    /// The tag size given, meters (nil: measured in the depth).
    package var tagSize: Double?
    /// The origin tag.
    package var originTag: Int
    /// The frames.
    package var frames: [Frame]
    /// Tag-to-world per tag used.
    package var tags: [Int: Pose]

    /// Each stored property given.
    package init(family: TagFamily, tagSize: Double? = nil, originTag: Int, frames: [Frame], tags: [Int: Pose]) {
        self.family = family
        self.tagSize = tagSize
        self.originTag = originTag
        self.frames = frames
        self.tags = tags
    }

    /// The file's JSON.
    package var json: JSONValue {
        typealias M = JSONValue.Member
        func matrix(_ p: Pose) -> JSONValue { .array(p.matrix.map { .number($0) }) }
        func intrinsics(_ k: Intrinsics) -> JSONValue {
            .object([M("width", .int(k.width)), M("height", .int(k.height)), M("fx", .number(k.fx)), M("fy", .number(k.fy)),
                     M("cx", .number(k.cx)), M("cy", .number(k.cy))])
        }
        return .object([
            M("rgbd_scene", .string(Self.kind)),
            M("version", .int(1)),
            M("world", .string("the origin tag's frame: x right, y down, z into the tag, meters, origin at its centre")),
            M("origin_tag", .int(originTag)),
            M("tag_family", .string(family.rawValue)),
            M("tag_size", .number(tagSize)),
            M("frames", .array(frames.map { f in
                .object([M("capture", .string(f.capture)), M("image", .string(f.image)),
                         M("camera_to_world", matrix(f.pose)),
                         M("color_intrinsics", intrinsics(f.colorIntrinsics)), M("depth_intrinsics", intrinsics(f.depthIntrinsics)),
                         M("depth_factor", .number(f.depthFactor)), M("disparity_offset", .number(f.disparityOffset))])
            })),
            M("tags", .array(tags.keys.sorted().compactMap { id in
                tags[id].map { .object([M("id", .int(id)), M("tag_to_world", matrix($0))]) }
            })),
        ])
    }
}
