#ifndef RGBD_CJSONC_SHIM_H
#define RGBD_CJSONC_SHIM_H
// json-c. Ownership rule used by rgbd: the root returned by json_tokener_parse_ex is
// owned (released with json_object_put); every object reached from it with
// json_object_object_get_ex / json_object_array_get_idx is borrowed and valid only
// while the root is alive.
#include <json.h>
#endif
