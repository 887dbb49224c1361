// The layer below, re-exported: a module that imports RGBDOutput sees it too.
@_exported import RGBDReconstruction
