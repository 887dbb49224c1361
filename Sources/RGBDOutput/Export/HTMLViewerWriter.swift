/// A web page that shows a surface (`NAME.html`): one self-contained file that opens in a
/// browser from disk, without a server or a network.
///
/// The page holds, inline: three.js with its orbit controls and glTF loader
/// (`ThreeJSLibrary`, found at run time; a notice of its MIT licence before it, and any
/// header of its own kept, the files being embedded unchanged), the surface as the
/// glTF binary `GLTFWriter` writes (base64; so the page shows exactly what `-o NAME.glb`
/// holds, in the same +Y-up axes, with whatever material and texture that file has), the
/// cameras' positions (`cameraPath`, turned alike) and the viewer's own script. It shows
/// the surface with the colors as captured (unlit) or lit, the camera path as a line
/// (green dot at the first frame, red at the last), and orbit (drag), pan (right drag),
/// zoom (wheel, pinch), reset view (a button and R), the path and the lighting toggled (C,
/// L). When the page has drawn the surface, its body's `data-state` is `ready` and
/// `data-vertices`, `data-triangles`, `data-cameras` give what it drew (`error` and the
/// reason in the page otherwise: a browser without WebGL).
public enum HTMLViewerWriter {
    /// Writes the page to `path` (staged: the file appears only when complete); `title`
    /// names the surface in the page. three.js is found first (`library`, else
    /// `ThreeJSLibrary.locate()`), so without it nothing is written.
    /// - Throws: `RGBDError` when three.js cannot be found or read, for a mesh whose arrays
    ///   disagree or that is too large for a glTF binary, or when the file cannot be written.
    public static func write(path: String, mesh: TriangleMesh, axes: YUpAxes, comments: [String] = [],
                             cameraPath: [SIMD3<Float>] = [], title: String, library: ThreeJSLibrary? = nil) throws {
        let three = try library ?? ThreeJSLibrary.locate()
        let glb = try GLTFWriter.glb(mesh: mesh, axes: axes, comments: comments, path: path)
        try write(path: path, glb: glb, axes: axes, cameraPath: cameraPath, title: title, library: three)
    }

    /// Writes the page of a glTF binary already made (a textured mesh's,
    /// `GLTFWriter.glb(textured:axes:comments:path:)`), `cameraPath` in rgbd's world turned
    /// by `axes` as the glTF's positions were.
    package static func write(path: String, glb: [UInt8], axes: YUpAxes, cameraPath: [SIMD3<Float>], title: String,
                              library: ThreeJSLibrary? = nil) throws {
        let three = try library ?? ThreeJSLibrary.locate()
        let bytes = page(glb: glb, cameraPath: cameraPath.map { axes.apply($0) }, title: title, library: three)
        try FileSystem.createDirectory(Path.directory(of: path))
        let files = StagedFiles()
        try files.stage(path, bytes: bytes)
        try files.commit()
    }

    /// The whole page: `glb` as it is, `cameraPath` in the glTF's axes.
    static func page(glb: [UInt8], cameraPath: [SIMD3<Float>], title: String, library: ThreeJSLibrary) -> [UInt8] {
        let name = escaped(title)
        var out = [UInt8]()
        out.reserveCapacity(glb.count * 4 / 3 + library.scripts.reduce(0) { $0 + $1.count } + 64 << 10)
        func text(_ s: String) { out += Array(s.utf8) }
        text("""
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="generator" content="rgbd \(escaped(RGBDVersion.string))">
            <title>\(name) (rgbd)</title>
            <style>\(style)</style>
            </head>
            <body data-state="loading">
            <div id="panel"><b>\(name)</b> <span id="stats">loading…</span>
            <div id="buttons"><button id="reset" title="R">Reset view</button> <button id="path" title="C">Camera path</button> <button id="lighting" title="L">Lighting</button></div>
            <div id="help">drag: orbit · right drag or shift drag: pan · wheel: zoom · R: reset view · C: camera path · L: lighting</div>
            <details id="about"><summary>About this surface</summary><pre id="comments"></pre></details>
            </div>
            <script type="application/octet-stream" id="rgbd-glb">
            """)
        out += Base64.encode(glb, lineLength: 76)
        text("</script>\n<script type=\"application/json\" id=\"rgbd-camera-path\">[")
        text(cameraPath.flatMap { [$0.x, $0.y, $0.z] }.map(tenthsOfMillimeter).joined(separator: ","))
        text("]</script>\n")
        let revision = library.revision.map { " r\($0)" } ?? ""
        for (file, script) in zip(ThreeJSLibrary.files, library.scripts) {
            text("<script>\n")
            if file == ThreeJSLibrary.files[0] { text(licence(revision: revision)) }
            text("/* three.js\(revision): \(file), as found in \(String(library.directory.map { $0 == "*" ? "?" : $0 })) */\n")
            out += scriptSafe(script)
            text("\n</script>\n")
        }
        text("<script>\n\(viewer)</script>\n</body>\n</html>\n")
        return out
    }

    /// three.js's licence, before it in the page.
    static func licence(revision: String) -> String {
        """
        /*
         * three.js\(revision), https://threejs.org, embedded by rgbd unchanged (a header of its own, if any, follows).
         * The MIT License. Copyright © 2010-2019 three.js authors.
         * Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
         * documentation files (the "Software"), to deal in the Software without restriction, including without limitation
         * the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and
         * to permit persons to whom the Software is furnished to do so, subject to the following conditions:
         * The above copyright notice and this permission notice shall be included in all copies or substantial portions
         * of the Software.
         * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO
         * THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
         * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
         * CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
         * DEALINGS IN THE SOFTWARE.
         */

        """
    }

    /// `v` meters to 0.1 mm, in the fewest digits: `1`, `-0.25`, `0.1235` (0 for a value
    /// that is not finite).
    static func tenthsOfMillimeter(_ v: Float) -> String {
        let scaled = (Double(v) * 10_000).rounded()
        guard scaled.isFinite, abs(scaled) < 1e15 else { return "0" }
        let n = Int(scaled), whole = abs(n) / 10_000
        var fraction = String(abs(n) % 10_000)
        fraction = String(repeating: "0", count: 4 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return (n < 0 ? "-" : "") + String(whole) + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// Text shown in the page: `&`, `<`, `>` and quotes as entities.
    static func escaped(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A script's bytes safe inside `<script>`: a `</script` (any case) in it, which would
    /// end the element, written `<\/script` (the same JavaScript in a string or a
    /// regular expression, where such text can be; three.js r111 has none).
    static func scriptSafe(_ script: [UInt8]) -> [UInt8] {
        let end = Array("</script".utf8)
        var out = [UInt8]()
        out.reserveCapacity(script.count)
        var i = 0
        while i < script.count {
            if script[i] == 0x3C, i + end.count <= script.count,
               zip(script[i..<i + end.count], end).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) {
                out += [0x3C, 0x5C, 0x2F]   // "<\/"
                i += 2
                continue
            }
            out.append(script[i])
            i += 1
        }
        return out
    }

    static let style = #"""
        html, body { margin: 0; height: 100%; overflow: hidden; background: #1e2127; }
        body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #e6e6e6; }
        canvas { display: block; }
        #panel { position: absolute; top: 8px; left: 8px; max-width: 44em; padding: 6px 10px; border-radius: 4px;
                 background: rgba(0, 0, 0, 0.55); }
        #buttons { margin: 4px 0; }
        button { font: inherit; color: inherit; background: #3a3f4b; border: 1px solid #596070; border-radius: 3px;
                 padding: 2px 8px; cursor: pointer; }
        button[aria-pressed="false"] { opacity: 0.6; }
        #help { color: #a8adb8; font-size: 12px; }
        #about summary { cursor: pointer; color: #a8adb8; font-size: 12px; }
        #comments { white-space: pre-wrap; font-size: 11px; max-height: 40vh; overflow: auto; margin: 4px 0 0; }
        """#

    /// The viewer: three.js's scripts define `THREE`; this reads the page's glTF binary and
    /// camera path and draws them. Written for three.js r111 and later (r147: the last
    /// with `examples/js`).
    static let viewer = #"""
        (function () {
          'use strict';
          var body = document.body, stats = document.getElementById('stats');
          function fail(message) { body.setAttribute('data-state', 'error'); stats.textContent = message; }
          if (typeof THREE === 'undefined' || !THREE.GLTFLoader || !THREE.OrbitControls) {
            fail('three.js did not load'); return;
          }
          function decode(id) {
            var binary = atob(document.getElementById(id).textContent.replace(/\s+/g, ''));
            var bytes = new Uint8Array(binary.length);
            for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
            return bytes;
          }
          var renderer;
          try {
            renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
          } catch (e) {
            fail('this browser cannot draw 3-D (WebGL): ' + e.message); return;
          }
          // The glTF's colors are linear: shown as sRGB.
          if (renderer.outputEncoding !== undefined && THREE.sRGBEncoding !== undefined) {
            renderer.outputEncoding = THREE.sRGBEncoding;
          } else {
            renderer.gammaOutput = true; renderer.gammaFactor = 2.2;
          }
          renderer.setPixelRatio(window.devicePixelRatio || 1);
          renderer.setSize(window.innerWidth, window.innerHeight);
          renderer.setClearColor(0x1e2127);
          body.insertBefore(renderer.domElement, body.firstChild);

          var scene = new THREE.Scene();
          var camera = new THREE.PerspectiveCamera(50, window.innerWidth / window.innerHeight, 0.01, 1000);
          scene.add(camera);
          // Lighting (L): light from above and from the viewer, dim enough that a white
          // surface facing both stays below white.
          var sky = new THREE.HemisphereLight(0xffffff, 0x404040, 0.3);
          scene.add(sky);
          var headlight = new THREE.DirectionalLight(0xffffff, 0.55);
          headlight.position.set(0.3, 0.4, 0);
          headlight.target.position.set(0, 0, -1);
          camera.add(headlight); camera.add(headlight.target);
          var controls = new THREE.OrbitControls(camera, renderer.domElement);
          controls.screenSpacePanning = true;
          function render() { renderer.render(scene, camera); }
          controls.addEventListener('change', render);

          var surfaces = [], pathGroup = null, lit = false;
          function setLighting(on) {
            lit = on;
            surfaces.forEach(function (s) { s.mesh.material = on ? s.lit : s.unlit; });
            var b = document.getElementById('lighting');
            b.setAttribute('aria-pressed', on ? 'true' : 'false');
            b.textContent = on ? 'Lighting: on' : 'Lighting: off (colors as captured)';
            render();
          }
          function togglePath() {
            if (!pathGroup) return;
            pathGroup.visible = !pathGroup.visible;
            document.getElementById('path').setAttribute('aria-pressed', pathGroup.visible ? 'true' : 'false');
            render();
          }
          function resetView() { controls.reset(); render(); }

          function cameraPath(values, radius) {
            if (values.length < 3) return null;
            var group = new THREE.Group();
            if (values.length >= 6) {
              var geometry = new THREE.BufferGeometry();
              var positions = new THREE.BufferAttribute(new Float32Array(values), 3);
              if (geometry.setAttribute) geometry.setAttribute('position', positions);
              else geometry.addAttribute('position', positions);
              group.add(new THREE.Line(geometry, new THREE.LineBasicMaterial({ color: 0xff9a1f })));
            }
            function dot(i, color) {
              var m = new THREE.Mesh(new THREE.SphereGeometry(radius * 0.012, 16, 12), new THREE.MeshBasicMaterial({ color: color }));
              m.position.set(values[i], values[i + 1], values[i + 2]);
              group.add(m);
            }
            dot(0, 0x2fd35a);
            if (values.length >= 6) dot(values.length - 3, 0xe8412c);
            group.userData.count = values.length / 3;
            return group;
          }

          function colored(material, geometry) {
            if (material.map) return true;
            var color = geometry.attributes.color;
            if (!color) return false;
            var a = color.array, white = a instanceof Float32Array ? 1 : (a instanceof Uint8Array ? 255 : 65535);
            for (var i = 0; i < a.length; i++) if ((i % color.itemSize) < 3 && a[i] !== white) return true;
            return false;
          }

          function show(gltf) {
            var root = gltf.scene || gltf.scenes[0];
            scene.add(root);
            var vertices = 0, triangles = 0, anyColor = false;
            root.traverse(function (o) {
              if (!o.isMesh) return;
              var g = o.geometry, count = g.attributes.position.count;
              vertices += count;
              triangles += (g.index ? g.index.count : count) / 3;
              var m = o.material;
              var unlit = new THREE.MeshBasicMaterial({ color: 0xffffff, map: m.map || null, vertexColors: m.vertexColors, side: m.side });
              surfaces.push({ mesh: o, lit: m, unlit: unlit });
              anyColor = anyColor || colored(m, g);
            });
            // The surface and the cameras in view.
            var box = new THREE.Box3().setFromObject(root);
            var path = JSON.parse(document.getElementById('rgbd-camera-path').textContent);
            for (var i = 0; i + 2 < path.length; i += 3) box.expandByPoint(new THREE.Vector3(path[i], path[i + 1], path[i + 2]));
            var center = new THREE.Vector3(), size = new THREE.Vector3();
            if (box.isEmpty()) { box.set(new THREE.Vector3(-1, -1, -1), new THREE.Vector3(1, 1, 1)); }
            box.getCenter(center); box.getSize(size);
            var radius = Math.max(size.length() / 2, 0.001);
            pathGroup = cameraPath(path, radius);
            if (pathGroup) scene.add(pathGroup);
            else document.getElementById('path').disabled = true;

            // The whole surface in view, from above and in front (+Y is up).
            var half = camera.fov * Math.PI / 360;
            var distance = radius / Math.sin(half) * (camera.aspect < 1 ? 1 / camera.aspect : 1);
            camera.near = radius / 1000; camera.far = distance + 20 * radius;
            camera.updateProjectionMatrix();
            camera.position.copy(center).addScaledVector(new THREE.Vector3(0.5, 0.8, 1).normalize(), distance);
            controls.target.copy(center);
            controls.minDistance = radius / 500; controls.maxDistance = 20 * radius;
            controls.update();
            controls.saveState();

            var extras = (gltf.asset && gltf.asset.extras && gltf.asset.extras.rgbd) || {};
            var about = [];
            if (extras.axes) about.push('axes: ' + extras.axes);
            (extras.comments || []).forEach(function (c) { about.push(c); });
            document.getElementById('comments').textContent = about.join('\n');
            var cameras = pathGroup ? pathGroup.userData.count : 0;
            stats.textContent = vertices.toLocaleString('en') + ' vertices, ' + triangles.toLocaleString('en') + ' triangles, ' +
              cameras + ' camera positions';
            body.setAttribute('data-vertices', String(vertices));
            body.setAttribute('data-triangles', String(triangles));
            body.setAttribute('data-cameras', String(cameras));
            document.getElementById('path').setAttribute('aria-pressed', pathGroup ? 'true' : 'false');
            setLighting(!anyColor);
            body.setAttribute('data-state', 'ready');
          }

          document.getElementById('reset').addEventListener('click', resetView);
          document.getElementById('path').addEventListener('click', togglePath);
          document.getElementById('lighting').addEventListener('click', function () { setLighting(!lit); });
          window.addEventListener('keydown', function (e) {
            if (e.ctrlKey || e.metaKey || e.altKey) return;
            var k = e.key ? e.key.toLowerCase() : '';
            if (k === 'r') resetView();
            else if (k === 'c') togglePath();
            else if (k === 'l') setLighting(!lit);
          });
          window.addEventListener('resize', function () {
            camera.aspect = window.innerWidth / window.innerHeight;
            camera.updateProjectionMatrix();
            renderer.setSize(window.innerWidth, window.innerHeight);
            render();
          });
          try {
            new THREE.GLTFLoader().parse(decode('rgbd-glb').buffer, '', show, function (e) {
              fail('the surface could not be read: ' + (e && e.message ? e.message : e));
            });
          } catch (e) {
            fail('the surface could not be read: ' + e.message);
          }
        })();
        """#
}
