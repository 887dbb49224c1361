import ArgumentParser
import RGBDKit

/// `rgbd info`: what rgbd finds in each capture, without rectifying it.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe captures and scans without rectifying them: files, sizes, calibration, lens tables, depth.",
        discussion: """
        A scan (Stray Scanner folder, Record3D .r3d or EXR + JPG folder; docs/scans.md) \
        is described as a scene: app and layout variant, frames (and frames skipped for \
        want of depth), frame rate and duration, gaps, color and depth sizes, intrinsics \
        and whether they vary, how the file stores poses and what its world is, the \
        trajectory's length and extent, depth percentiles and holes, and the confidence \
        levels' shares over up to 60 frames spread over the scan.

        INPUTS are capture JSON files, Portrait photos or directories of captures, as \
        for rectify (a Portrait photo's depth image is decoded, its lens tables computed \
        from the coefficients in its XMP; its depth kind and accuracy are shown). For \
        each capture: the key set (schema) and files, the photo's format and size (from \
        its header; it is not decoded), the depth map's size, the reference size, the \
        intrinsics as captured and scaled to each image, the lens table (length, range, \
        and how far it moves the photo's corner pixels), how well the inverse table \
        undoes it (round trip on a 41×31 grid of the photo, pixels; points the forward \
        table pushes beyond the inverse table's radius are counted, not measured), depth \
        range and percentiles 5/50/95 over valid pixels, the fraction of holes, a \
        Portrait photo's ExtrinsicMatrix, and the warnings rectify would give, plus \
        warnings about a calibration that looks inconsistent (fx/fy more than 5 % from \
        1, or a distortion center more than 5 % of the diagonal from the principal point).

        A capture rectify would reject fails here with the same one-line error on \
        stderr; the others are still described, and the exit status is 1. A photo or \
        depth map whose aspect ratio no crop or rounding explains is the exception: the \
        capture is described, with the error under "errors" (rectify, cloud and preview \
        refuse it), the error is also said on stderr, and the exit status is 1.

        --json prints one JSON document on stdout instead: an array with one object per \
        capture in input order, failed inputs included with "status": "failed" and \
        their "error". Its fields are documented in docs/info.md; info_version says \
        which version of them an entry follows.
        """)

    @OptionGroup var captures: CaptureInputs

    @Flag(help: "Print one JSON document (an array, one object per capture) instead of text.")
    var json = false

    @Option(help: ArgumentHelp("A CSV of places (name,latitude,longitude[,altitude]): for each, its distance and bearing from the photo, whether it is in view, at which column (and row), and whether the depth map hides it (docs/geo.md).", valueName: "places.csv"), completion: .file())
    var placemarks: String?

    @Flag(help: "Also rectify each capture and list its AprilTags: IDs, corners, poses from corners and depth, residuals, what the depth says of --tag-size (docs/markers.md).")
    var tags = false

    @OptionGroup var tagArguments: TagArguments

    func run() throws {
        let places = try Placemark.readArgument(placemarks)
        // Scans are described by SceneInfo; the other inputs are captures.
        let (scenes, captureInputs) = SceneInputs.split(captures.inputs)
        var sceneEntries: [String: JSONValue] = [:]
        var sceneFailures = 0
        var printed = 0
        for path in scenes {
            do {
                let info = try SceneInfo(scene: SceneInputs.open(path, report: false))
                if json {
                    sceneEntries[path] = info.jsonValue
                } else {
                    print((printed > 0 ? "\n" : "") + info.text, terminator: "")
                    printed += 1
                }
            } catch {
                Report.error(error)
                sceneEntries[path] = CaptureInfo.failureJSON(input: path, error: error)
                sceneFailures += 1
            }
        }
        var captures = captures
        captures.inputs = captureInputs
        if captureInputs.isEmpty {
            if json { print(JSONValue.array(scenes.compactMap { sceneEntries[$0] }).text()) }
            if sceneFailures > 0 { throw ExitCode(1) }
            return
        }
        // The inputs are expanded once, by the batch; skipped files are reported here
        // (the batch runs quiet: the text on stdout is this command's progress), once per
        // input, and failed inputs are entries of the JSON document.
        let batch = Batch(inputs: captures.inputs, recursive: captures.recursive, image: captures.image, quiet: true,
                          showTimings: false)
        var reported: Set<String> = []
        for input in batch.plan.inputs where reported.insert(input.input).inserted {
            if case .success(let found) = input.expansion {
                for note in found.skipped { Report.warning(note) }
            }
        }
        var entries: [String: JSONValue] = [:]
        let failures = try batch.run(directory: nil, outputs: { _ in [] }) { item, _ in
            do {
                let info = try CaptureInfo.read(json: item.json, image: item.image, placemarks: places)
                let found = tags && info.errors.isEmpty
                    ? try CaptureTags.read(json: item.json, image: item.image, options: tagArguments.options) : nil
                if json {
                    var entry = info.jsonValue
                    if let found, case .object(var members) = entry {
                        members.append(JSONValue.Member("tags", found.jsonValue))
                        entry = .object(members)
                    }
                    entries[item.json] = entry
                } else {
                    print((printed > 0 ? "\n" : "") + info.text + (found?.text ?? ""), terminator: "")
                    printed += 1
                }
                for warning in found?.warnings ?? [] { Report.warning("\(item.json): \(warning)") }
                // Described, yet refused by rectify, cloud and preview: a failure, said once.
                if let refusal = info.errors.first { throw Described(error: refusal) }
            } catch let described as Described {
                throw described.error
            } catch {
                entries[item.json] = CaptureInfo.failureJSON(input: item.json, error: error)
                throw error
            }
            return .done
        }
        if json {
            // Input order; a capture reached twice is listed once, as Batch does it once.
            var document: [JSONValue] = []
            var listed: Set<String> = []
            for path in scenes { if let entry = sceneEntries[path] { document.append(entry) } }
            for input in batch.plan.inputs where listed.insert("input:" + input.input).inserted {
                switch input.expansion {
                case .failure(let error):
                    document.append(CaptureInfo.failureJSON(input: input.input, error: error))
                case .success(let found):
                    for item in found.items where listed.insert(item.json).inserted {
                        if let entry = entries[item.json] { document.append(entry) }
                    }
                }
            }
            print(JSONValue.array(document).text())
        }
        if failures + sceneFailures > 0 { throw ExitCode(1) }
    }
}

/// An error of a capture `rgbd info` has described (its entry stays the description).
private struct Described: Error {
    let error: RGBDError
}

extension Placemark {
    /// The places of `--placemarks FILE` (none without it); a file that cannot be read is
    /// one error line and exit status 64, before any capture is processed.
    static func readArgument(_ path: String?) throws -> [Placemark] {
        guard let path else { return [] }
        do {
            return try Placemark.read(csv: FileSystem.readFile(path, limit: 16 << 20), file: path)
        } catch {
            Report.error(error)
            throw ExitCode(64)
        }
    }
}
