#ifndef RGBD_CPROJ_SHIM_H
#define RGBD_CPROJ_SHIM_H
// PROJ's C API (coordinate reference systems, transformations, WKT), for rgbd cloud --crs
// and the geoid. Swift imports it directly; Sources/RGBDKit/Geo/Projection.swift wraps it.
#include <proj.h>
#endif
