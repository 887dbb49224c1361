// The layer below, re-exported: a module that imports RGBDRectification sees it too.
@_exported import RGBDCapture
