// The C interface is implemented in Swift (Sources/RGBDC, `@c @implementation`); this
// file only makes the header a C target of its own, so the compiler checks every Swift
// implementation against it.
#include "rgbd.h"
