// The layer below, re-exported: a module that imports RGBDKit sees it too.
@_exported import RGBDOutput
