extension SyntheticScan {
    /// The ground truth of a scan written in one layout: what a correct reader must find.
    package struct Truth: Sendable {
        /// The layout.
        package var layout: Layout
        /// Maps room (generator world) coordinates to the layout's world: the identity for
        /// Stray and Record3D's `.arkit` world (ARKit's world), the inverse of the first
        /// camera pose with OpenGL axes for Record3D's `.firstFrame` world (re-based on the
        /// first frame).
        package var worldFromRoom: SynthPose
        /// Per frame, the true camera-to-world pose in **OpenCV camera axes** in the layout's
        /// world.
        package var poses: [SynthPose]
        /// Per frame, the pose the scan's files record (in the layout's world, OpenCV
        /// camera axes): `poses` with the odometry error of `Options.poseError`, if any.
        package var recordedPoses: [SynthPose]
        /// Per frame, the timestamp, seconds.
        package var timestamps: [Double]
        /// The colour camera, at the size the layout stores images.
        package var colorCamera: SynthPinhole
        /// The depth camera (the scan's depth size; see `depthCameras`).
        package var depthCamera: SynthPinhole
        /// Per frame, its depth camera, nil for a frame written without depth.
        package var depthCameras: [SynthPinhole?]
        /// The room, in generator-world coordinates.
        package var room: SyntheticRoom

        /// A point given in the layout's world, in room coordinates.
        package func roomPoint(_ p: SIMD3<Double>) -> SIMD3<Double> { worldFromRoom.inverse.apply(p) }

        /// The distance of a point given in the layout's world to the nearest true surface.
        package func distanceToSurface(_ p: SIMD3<Double>) -> Double { room.distanceToSurface(roomPoint(p)) }
    }

    /// The ground truth of this scan written in `layout`.
    package func truth(for layout: Layout) -> Truth {
        let portrait = layout.portrait
        let roomPoses = (0..<frameCount).map { trajectory.pose(frame: $0) }
        let worldFromRoom = layout.rebased ? roomPoses[0].flippingCameraAxes.inverse : .identity
        let colorK = colorCamera(portrait: portrait)
        let depthCameras: [SynthPinhole?] = (0..<frameCount).map { i in
            if options.framesWithoutDepth.contains(i) { return nil }
            if let size = depthSize(frame: i, portrait: portrait) { return colorK.resized(width: size.x, height: size.y) }
            return depthCamera(portrait: portrait)
        }
        return Truth(layout: layout, worldFromRoom: worldFromRoom, poses: roomPoses.map { worldFromRoom * $0 },
                     recordedPoses: recordedPoses().map { worldFromRoom * $0 },
                     timestamps: (0..<frameCount).map { trajectory.timestamp(frame: $0) },
                     colorCamera: colorK, depthCamera: depthCamera(portrait: portrait), depthCameras: depthCameras,
                     room: room)
    }

    /// `count` points on the true surfaces that frame `index` sees, at seeded sub-pixel
    /// positions of its colour camera, each with the colour the renderer gives it there
    /// (unrounded): where a correct export must show them. Positions in `layout`'s world.
    package func visiblePoints(frame index: Int, count: Int, layout: Layout) -> [(point: SIMD3<Double>, color: SIMD3<Double>)] {
        let truth = truth(for: layout)
        let pose = trajectory.pose(frame: index)
        let k = colorCamera(portrait: layout.portrait)
        var points: [(point: SIMD3<Double>, color: SIMD3<Double>)] = []
        points.reserveCapacity(count)
        for n in 0..<count {
            // Anywhere in the image, edges included (a pixel centre ± ½).
            let u = uniform(n, index, 7_001) * Double(k.width) - 0.5
            let v = uniform(n, index, 7_002) * Double(k.height) - 0.5
            let d = pose.rotation * k.ray(u, v)
            guard let hit = room.cast(origin: pose.translation, direction: d) else { continue }
            points.append((truth.worldFromRoom.apply(hit.point), Self.shade(room, hit, direction: d)))
        }
        return points
    }

    /// Writes `visiblePoints` of every frame to `path` as CSV: `frame,x,y,z,r,g,b`.
    package func writeVisiblePoints(count: Int, layout: Layout, to path: String) throws {
        try ScanOutputFile.write(path, Array(visiblePointsCSV(count: count, layout: layout).utf8))
    }

    /// `visiblePoints` of every frame as CSV: `frame,x,y,z,r,g,b`.
    func visiblePointsCSV(count: Int, layout: Layout) -> String {
        var lines = ["frame,x,y,z,r,g,b"]
        for i in 0..<frameCount {
            for (p, c) in visiblePoints(frame: i, count: count, layout: layout) {
                lines.append(([Double(i)] + [p.x, p.y, p.z, c.x, c.y, c.z]).map(scanNumber).joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The ground truth as JSON (what `write(layout:to:)` puts beside the scan).
    package func truthJSON(for layout: Layout) -> String {
        let truth = truth(for: layout)
        func v3(_ p: SIMD3<Double>) -> String { "[\(scanNumber(p.x)), \(scanNumber(p.y)), \(scanNumber(p.z))]" }
        func matrix(_ pose: SynthPose) -> String {
            "[" + pose.rows.map { "[" + $0.map(scanNumber).joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
        }
        func camera(_ k: SynthPinhole) -> String {
            "{\"width\": \(k.width), \"height\": \(k.height), \"fx\": \(scanNumber(k.fx)), \"fy\": \(scanNumber(k.fy)), "
                + "\"cx\": \(scanNumber(k.cx)), \"cy\": \(scanNumber(k.cy))}"
        }
        let frames = (0..<frameCount).map { i in
            let depth = truth.depthCameras[i].map { "[\($0.width), \($0.height)]" } ?? "null"
            return "    {\"index\": \(i), \"timestamp\": \(scanNumber(truth.timestamps[i])), \"depth_size\": \(depth), "
                + "\"camera_to_world\": \(matrix(truth.poses[i]))"
                + (options.poseError == nil ? "" : ", \"recorded_camera_to_world\": \(matrix(truth.recordedPoses[i]))") + "}"
        }
        let boxes = room.boxes.map { b in
            "      {\"center\": \(v3(b.center)), \"half_size\": \(v3(b.halfSize)), \"yaw\": \(scanNumber(b.yaw))}"
        }
        // Spheres only when the room has them (the default room's truth is unchanged).
        let spheres = room.spheres.map { "      {\"center\": \(v3($0.center)), \"radius\": \(scanNumber($0.radius))}" }
        let spheresJSON = spheres.isEmpty ? "" : ",\n    \"spheres\": [\n\(spheres.joined(separator: ",\n"))\n    ]"
        // Wall tags only when the room has them.
        let tags = room.wallTags.map { t in
            "      {\"family\": \"tag36h11\", \"id\": \(t.id), \"wall\": \(t.wall), \"center\": [\(scanNumber(t.center.x)), \(scanNumber(t.center.y))], \"size\": \(scanNumber(t.size))}"
        }
        let tagsJSON = tags.isEmpty ? "" : ",\n    \"wall_tags\": [\n\(tags.joined(separator: ",\n"))\n    ],\n"
            + "    \"wall_tag_center\": \"along the wall (z on walls 0 and 1: x = min and max; x on walls 2 and 3: z = min and max) and height, meters; size: the black square's edge\""
        // Only when the poses carry odometry error (other truths are unchanged).
        let wallFrames = trajectory.plainWallFrames(count: frameCount)
        let poseErrorJSON = options.poseError.map { e in
            "\n  \"pose_error\": {\"position_drift\": \(scanNumber(e.positionDrift)), \"heading_drift\": \(scanNumber(e.headingDrift)), "
                + "\"jitter\": \(scanNumber(e.jitter)), \"jumps\": [\(e.jumps.map(scanNumber).joined(separator: ", "))], "
                + "\"seed\": \(e.seed), \"plain_wall_frames\": [\(wallFrames.map(String.init).joined(separator: ", "))]},"
        } ?? ""
        let rebasing = layout.rebased
            ? "the room's world re-based on the first frame: world_from_room = inverse of frame 0's camera-to-world pose with OpenGL camera axes"
            : "the room's world itself (ARKit-like: gravity-aligned, +y up, metres)"
        return """
        {
          "generator": "rgbd RGBDSynth SyntheticScan",
          "layout": "\(layout.name)",
          "conventions": "camera_to_world: 4x4 rows, OpenCV camera axes (x right, y down, z forward), in the layout's world; pixel centres at integer coordinates; depth is camera-frame z in metres",
          "layout_world": "\(rebasing)",
          "world_from_room": \(matrix(truth.worldFromRoom)),
          "frame_count": \(frameCount),
          "fps": \(scanNumber(trajectory.fps)),
          "color_camera": \(camera(truth.colorCamera)),
          "depth_camera": \(camera(truth.depthCamera)),
          "depth_noise": \(scanNumber(options.depthNoise)),
          "holes": \(options.holes),
          "seed": \(options.seed),\(poseErrorJSON)
          "room": {
            "min_corner": \(v3(room.minCorner)),
            "max_corner": \(v3(room.maxCorner)),
            "boxes": [
        \(boxes.joined(separator: ",\n"))
            ],
            "box_yaw": "radians about +y; a box's point p_local maps to center + Ry(yaw) p_local"\(spheresJSON)\(tagsJSON)
          },
          "frames": [
        \(frames.joined(separator: ",\n"))
          ]
        }

        """
    }
}
