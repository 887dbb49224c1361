// The layer below, re-exported: a module that imports RGBDScan sees it too.
@_exported import RGBDMarkers
