// The layer below, re-exported: a module that imports RGBDCapture sees it too.
@_exported import RGBDFoundation
