import Foundation
import Testing
@testable import RGBDOutput
@testable import RGBDKit

/// The web page's pieces that do not need a browser: base64 as Foundation decodes it,
/// scripts kept from ending their element, three.js's revision read, the page's parts.
/// The page drawn: Tests/python/test_web_viewer.py (headless Chromium).
@Suite struct HTMLViewerTests {
    @Test func base64DecodesToTheBytes() {
        for count in [0, 1, 2, 3, 4, 56, 57, 58, 1000] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let text = Base64.encode(bytes, lineLength: 76)
            #expect(Base64.encode(bytes) == text.filter { $0 != 0x0A })
            #expect(text.split(separator: 0x0A).allSatisfy { $0.count <= 76 })
            let decoded = Data(base64Encoded: Data(text), options: .ignoreUnknownCharacters)
            #expect(decoded == Data(bytes), "\(count) bytes")
            #expect(String(decoding: text, as: UTF8.self).filter { $0 != "\n" } == Data(bytes).base64EncodedString())
        }
    }

    @Test func scriptsCannotEndTheirElement() {
        let script = Array("a='</script>';b='</SCRIPT >';c='<\\/script';d='</scrip';".utf8)
        let safe = String(decoding: HTMLViewerWriter.scriptSafe(script), as: UTF8.self)
        #expect(safe == "a='<\\/script>';b='<\\/SCRIPT >';c='<\\/script';d='</scrip';")
        #expect(HTMLViewerWriter.escaped("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;")
    }

    @Test func revisionIsRead() {
        #expect(ThreeJSLibrary.revision(of: Array("x;var REVISION=\"111\";".utf8)) == "111")
        #expect(ThreeJSLibrary.revision(of: Array("const REVISION = '147';".utf8)) == "147")
        #expect(ThreeJSLibrary.revision(of: Array("REVISION is not stated".utf8)) == nil)
    }

    @Test func pageHoldsItsParts() throws {
        let library = ThreeJSLibrary(directory: "/lib/three", revision: "111",
                                     scripts: [Array("var THREE={};".utf8), Array("/*controls*/".utf8), Array("/*loader*/".utf8)])
        var mesh = TriangleMesh()
        mesh.positions = [0, 0, 0, 1, 0, 0, 0, 1, 0]
        mesh.normals = [0, 0, 1, 0, 0, 1, 0, 0, 1]
        mesh.colors = [255, 0, 0, 0, 255, 0, 0, 0, 255]
        mesh.faces = [0, 1, 2]
        let axes = YUpAxes(world: .gravityAligned, frame: .level)
        let glb = try GLTFWriter.glb(mesh: mesh, axes: axes, comments: [], path: "t.html")
        let page = String(decoding: HTMLViewerWriter.page(glb: glb, cameraPath: [SIMD3(1, 2, 3), SIMD3(0.12345, -1, 0)],
                                                          title: "a <room>", library: library), as: UTF8.self)
        #expect(page.contains("<title>a &lt;room&gt; (rgbd)</title>"))
        #expect(page.contains("[1,2,3,0.1235,-1,0]</script>"), "positions rounded to 0.1 mm")
        #expect(page.contains(Data(glb).base64EncodedString().prefix(76)))
        let order = ["The MIT License", "var THREE={};", "/*controls*/", "/*loader*/", "new THREE.GLTFLoader()"]
            .map { page.range(of: $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && order.compactMap { $0 } == order.compactMap { $0 }.sorted())
    }
}
