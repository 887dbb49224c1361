// The layer below, re-exported: a module that imports RGBDMarkers sees it too.
@_exported import RGBDRectification
