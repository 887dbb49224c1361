import CProj

/// PROJ's library, loaded at the first `--crs` rather than linked (CProj's loader): an
/// `rgbd` that projects nothing never loads it, nor libcurl and the rest it depends on.
enum ProjLibrary {
    /// PROJ's functions; without the library, an error about `--crs crs` that says what
    /// is missing and how to install it.
    static func load(for crs: String) throws -> rgbd_proj {
        guard let table = rgbd_proj_load() else {
            let why = RGBDError.shown(String(cString: rgbd_proj_failure()), limit: 200)
            throw RGBDError(.io, "the coordinate system \(RGBDError.shown(crs)) needs PROJ's library (\(why)): install it with "
                                + "Scripts/bootstrap.sh (its packages: docs/install.md)", argument: .crs)
        }
        return table.pointee
    }
}

/// Coordinates in a coordinate reference system PROJ knows (`rgbd cloud --crs EPSG:…`,
/// docs/geo.md): a transformation from WGS84 Earth-centred coordinates (EPSG:4978) to the
/// system, with easting (longitude) first, and its OGC WKT. PROJ's network access is off:
/// only what is installed is used. PROJ is loaded at the first use (`ProjLibrary`), not linked.
package final class Projection {
    private let pj: rgbd_proj
    private let context: OpaquePointer
    private let transformation: OpaquePointer
    /// The system as given (`EPSG:32632`).
    package let crs: String
    /// Its WKT (OGC WKT 1, as LAS 1.4 stores it).
    package let wkt: String

    /// The transformation to `crs` (any definition PROJ accepts: `EPSG:32632`, …).
    ///
    /// - Throws: `RGBDError` (`.invalidArgument`) when PROJ does not know `crs`, or it is
    ///   not a projected or geographic system.
    package init(crs: String) throws {
        let pj = try ProjLibrary.load(for: crs)
        self.pj = pj
        guard let context = pj.proj_context_create() else { throw RGBDError(.invalidArgument, "cannot start PROJ") }
        self.context = context
        self.crs = crs
        _ = pj.proj_context_set_enable_network(context, 0)
        _ = pj.proj_log_level(context, PJ_LOG_NONE)
        func fail(_ what: String) -> RGBDError {
            let reason = pj.proj_context_errno_string(context, pj.proj_context_errno(context)).map { String(cString: $0) } ?? "unknown"
            return RGBDError(.invalidArgument, "the coordinate system \(RGBDError.shown(crs)): \(what) (PROJ: \(reason))", argument: .crs)
        }
        guard let target = pj.proj_create(context, crs) else {
            _ = pj.proj_context_destroy(context)
            throw fail("not a coordinate system PROJ knows")
        }
        defer { _ = pj.proj_destroy(target) }
        let type = pj.proj_get_type(target)
        guard type == PJ_TYPE_PROJECTED_CRS || type == PJ_TYPE_GEOGRAPHIC_3D_CRS || type == PJ_TYPE_GEOGRAPHIC_2D_CRS else {
            _ = pj.proj_context_destroy(context)
            throw RGBDError(.invalidArgument, "the coordinate system \(RGBDError.shown(crs)): not a projected or geographic coordinate system", argument: .crs)
        }
        guard let text = pj.proj_as_wkt(context, target, PJ_WKT1_GDAL, nil) else {
            _ = pj.proj_context_destroy(context)
            throw fail("has no WKT 1 form")
        }
        wkt = String(cString: text)
        guard let raw = pj.proj_create_crs_to_crs(context, "EPSG:4978", crs, nil) else {
            _ = pj.proj_context_destroy(context)
            throw fail("no transformation from WGS84")
        }
        let normalized = pj.proj_normalize_for_visualization(context, raw)
        _ = pj.proj_destroy(raw)
        guard let normalized else {
            _ = pj.proj_context_destroy(context)
            throw fail("cannot order its axes east first")
        }
        transformation = normalized
    }

    deinit {
        _ = pj.proj_destroy(transformation)
        _ = pj.proj_context_destroy(context)
    }

    /// An ECEF point (meters) in the system: easting, northing (or longitude, latitude in
    /// degrees) and the height above the ellipsoid; nil when PROJ cannot place it.
    package func project(ecef p: SIMD3<Double>) -> SIMD3<Double>? {
        let out = pj.proj_trans(transformation, PJ_FWD, PJ_COORD(xyzt: PJ_XYZT(x: p.x, y: p.y, z: p.z, t: .infinity)))
        let r = SIMD3(out.xyzt.x, out.xyzt.y, out.xyzt.z)
        return r.x.isFinite && r.y.isFinite && r.z.isFinite ? r : nil
    }

    /// The EGM96 geoid's height above the WGS84 ellipsoid (meters: ellipsoidal height =
    /// height above mean sea level + this) at a place, from PROJ's `egm96_15.gtx` grid; nil
    /// when the grid is not installed.
    package func egm96Undulation(latitude: Double, longitude: Double) -> Double? {
        guard let context = pj.proj_context_create() else { return nil }
        defer { _ = pj.proj_context_destroy(context) }
        _ = pj.proj_context_set_enable_network(context, 0)
        _ = pj.proj_log_level(context, PJ_LOG_NONE)
        let pipeline = "+proj=pipeline +step +proj=unitconvert +xy_in=deg +xy_out=rad +step +proj=vgridshift +grids=egm96_15.gtx +multiplier=1"
        guard let shift = pj.proj_create(context, pipeline) else { return nil }
        defer { _ = pj.proj_destroy(shift) }
        let out = pj.proj_trans(shift, PJ_FWD, PJ_COORD(xyzt: PJ_XYZT(x: longitude, y: latitude, z: 0, t: .infinity)))
        let n = out.xyzt.z
        return n.isFinite && abs(n) < 200 ? n : nil
    }
}

extension Projection {
    /// Points of an ENU frame (`frame.kind == .enu`; 3 coordinates each, meters) in this
    /// system: each turned into ECEF at the frame's origin, projected, its height then
    /// given above mean sea level. The origin's EXIF altitude (above mean sea level) is
    /// raised by the EGM96 geoid's undulation there to an ellipsoidal height, and the
    /// points' ellipsoidal heights lowered by the same; without the geoid grid both stay
    /// as they are (heights above the ellipsoid taken to be above sea level), said in the
    /// returned notes.
    ///
    /// - Throws: `RGBDError` when the frame has no geodetic origin or PROJ cannot place a point.
    package func project(enu positions: [Double], frame: WorldFrame) throws -> (positions: [Double], notes: [String]) {
        guard frame.kind == .enu, let origin = frame.origin else {
            throw RGBDError(.invalidArgument, "a coordinate system needs the enu frame: the points must be placed on the Earth", argument: .frame)
        }
        var notes: [String] = []
        let undulation = egm96Undulation(latitude: origin.latitude, longitude: origin.longitude)
        if let undulation {
            notes.append("heights above mean sea level (EGM96 geoid, \(DecimalText.fixed(undulation, 2)) m above the ellipsoid at the origin)")
        } else {
            notes.append("no geoid grid (egm96_15.gtx) installed: heights are the EXIF's mean-sea-level altitude taken as ellipsoidal, which shifts horizontal positions by less than a millimeter")
        }
        let n = undulation ?? 0
        var ellipsoidal = origin
        ellipsoidal.height += n
        let enu = ENUFrame(origin: ellipsoidal)
        var out = [Double](repeating: 0, count: positions.count)
        for i in 0..<(positions.count / 3) {
            let local = SIMD3(positions[3 * i], positions[3 * i + 1], positions[3 * i + 2])
            guard let p = project(ecef: enu.ecef(enu: local)) else {
                throw RGBDError(.invalidArgument, "the coordinate system \(RGBDError.shown(crs)): PROJ cannot place point \(i) (outside the system's area?)", argument: .crs)
            }
            out[3 * i] = p.x
            out[3 * i + 1] = p.y
            out[3 * i + 2] = p.z - n
        }
        return (out, notes)
    }
}
