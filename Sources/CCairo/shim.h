#ifndef RGBD_CCAIRO_SHIM_H
#define RGBD_CCAIRO_SHIM_H
// cairo's 2-D drawing API (image surfaces, paths, the toy text API), for rgbd preview's
// sheet. Swift imports it directly; Sources/RGBDKit/Inspection/Preview/Canvas.swift wraps it.
#include <cairo.h>
#endif
