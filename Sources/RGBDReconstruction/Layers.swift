// The layer below, re-exported: a module that imports RGBDReconstruction sees it too.
@_exported import RGBDScan
