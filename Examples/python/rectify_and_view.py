#!/usr/bin/env python3
"""Rectify a capture and show captured vs rectified color and depth side by side.

    python3 Examples/python/rectify_and_view.py [CAPTURE.json] [-o FIGURE.png] [--show]

CAPTURE.json defaults to the repository's Examples/sample/shot.json. With a display the
figure opens in a window; without one (a server, CI) or with -o, it is saved as a PNG
(default rectified_view.png). A grid of straight lines drawn over the color images shows
what rectification does: straight edges of the scene line up with them only after it.

Needs matplotlib (`python3 -m pip install matplotlib`) and the rgbd package.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import List, Optional

import numpy as np

import rgbd

SAMPLE = Path(__file__).resolve().parents[1] / "sample" / "shot.json"


def has_display() -> bool:
    """Whether a window can be opened (macOS and Windows always; elsewhere X11 or Wayland)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("capture", nargs="?", type=Path, default=SAMPLE, help="capture JSON (default: the sample)")
    parser.add_argument("--image", type=Path, help="the JPEG, if not the one beside the JSON")
    parser.add_argument("-o", "--output", type=Path, help="save the figure to this PNG")
    parser.add_argument("--show", action="store_true", help="open a window even when saving")
    args = parser.parse_args(argv)

    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: python3 -m pip install matplotlib", file=sys.stderr)
        return 1
    show = args.show or (args.output is None and has_display())
    if not show:
        matplotlib.use("Agg")  # no display: render off-screen
    import matplotlib.pyplot as plt

    with rgbd.load_capture(args.capture, args.image) as cap:
        color, rectified_color = cap.color, cap.rectified_color()
        depth, rectified_depth = cap.depth, cap.rectified_depth()
        k = cap.intrinsics

    valid = np.concatenate([depth[~np.isnan(depth)], rectified_depth[~np.isnan(rectified_depth)]])
    low, high = (np.percentile(valid, [1, 99]) if valid.size else (0.0, 1.0))
    cmap = plt.get_cmap("turbo").copy()
    cmap.set_bad("black")  # NaN = no depth

    fig, axes = plt.subplots(2, 2, figsize=(12, 9), constrained_layout=True)
    panels = [
        (axes[0, 0], color, "color as captured (distorted)", None),
        (axes[0, 1], rectified_color,
         f"rectified color  fx={k.color.fx:.1f} cx={k.color.cx:.1f} cy={k.color.cy:.1f}", None),
        (axes[1, 0], depth, "depth as captured (m)", cmap),
        (axes[1, 1], rectified_depth,
         f"rectified depth  fx={k.depth.fx:.2f} cx={k.depth.cx:.2f} cy={k.depth.cy:.2f}", cmap),
    ]
    for ax, image, title, colormap in panels:
        shown = ax.imshow(image, cmap=colormap, vmin=low if colormap else None, vmax=high if colormap else None,
                          interpolation="nearest")
        ax.set_title(title, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        if colormap is None:
            h, w = image.shape[:2]
            for x in np.linspace(0, w - 1, 9)[1:-1]:
                ax.axvline(x, color="lime", linewidth=0.8, alpha=0.9)
            for y in np.linspace(0, h - 1, 7)[1:-1]:
                ax.axhline(y, color="lime", linewidth=0.8, alpha=0.9)
        else:
            fig.colorbar(shown, ax=ax, shrink=0.8, label="meters (black: no depth)")
    fig.suptitle(f"{args.capture.name}: color {cap.color_size[0]}×{cap.color_size[1]}, "
                 f"depth {cap.depth_size[0]}×{cap.depth_size[1]}")

    if not show or args.output:
        output = args.output or Path("rectified_view.png")
        fig.savefig(output, dpi=100)
        print(f"saved {output}")
    if show:
        plt.show()
    return 0


if __name__ == "__main__":
    sys.exit(main())
