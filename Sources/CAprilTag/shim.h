#ifndef RGBD_CAPRILTAG_SHIM_H
#define RGBD_CAPRILTAG_SHIM_H
// AprilTag 3 (BSD-2): the detector and the two tag families rgbd reads. Swift imports it
// directly; Sources/RGBDKit/Markers/TagDetector.swift wraps it (one detector per thread).
// The library's pkg-config file has no include flags, so the headers are named with their
// directory.
#include <apriltag/apriltag.h>
#include <apriltag/tag36h11.h>
#include <apriltag/tagStandard41h12.h>
#endif
