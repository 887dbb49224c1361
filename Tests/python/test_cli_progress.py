"""Progress of a batch, as a person sees it: the real rgbd binary under a pseudo-terminal.

On a terminal a batch shows one status line redrawn in place (no line per capture), never
as wide as the window; off a terminal it prints one line per capture. The terminal's
screen is reconstructed from the bytes rgbd wrote (carriage returns, erase-line, newlines)
the way a terminal would show them.
"""

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import termios
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "Examples" / "sample"
CAPTURES = 5


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A directory of CAPTURES copies of the sample capture."""
    directory = tmp_path_factory.mktemp("batch")
    for i in range(CAPTURES):
        shutil.copy(SAMPLE / "shot.json", directory / f"capture-with-a-rather-long-name-{i}.json")
        shutil.copy(SAMPLE / "shot.jpg", directory / f"capture-with-a-rather-long-name-{i}.jpg")
    return directory


def run_in_terminal(argv, columns):
    """Runs argv with stderr (and stdout) on a pseudo-terminal `columns` wide; returns (status, bytes)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, close_fds=True)
    os.close(terminal)
    output = bytearray()
    while True:
        ready, _, _ = select.select([controller], [], [], 60)
        if not ready:
            process.kill()
            pytest.fail("rgbd wrote nothing for 60 s")
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the terminal's other side is closed
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    return process.wait(timeout=60), bytes(output)


def screen(output):
    """The lines a terminal shows, and the widest text ever drawn on one line.

    Handles what rgbd writes: text, CR (back to column 0), ESC[K (erase to the end of the
    line), LF (the terminal's ONLCR makes it CR LF).
    """
    lines, line, column, widest = [], [], 0, 0
    text = output.decode("utf-8")
    i = 0
    while i < len(text):
        if text.startswith("\x1b[K", i):
            del line[column:]
            i += 3
            continue
        ch = text[i]
        i += 1
        if ch == "\r":
            column = 0
        elif ch == "\n":
            lines.append("".join(line))
            line, column = [], 0
        else:
            if column < len(line):
                line[column] = ch
            else:
                line.append(ch)
            column += 1
            widest = max(widest, column)
    if line:
        lines.append("".join(line))
    return lines, widest


@pytest.mark.parametrize("columns", [40, 100])
def test_terminal_shows_one_status_line_never_wider_than_the_window(rgbd_bin, batch, tmp_path, columns):
    status, output = run_in_terminal([str(rgbd_bin), "rectify", str(batch), "-o", str(tmp_path / "out")], columns)
    assert status == 0, output.decode(errors="replace")
    lines, widest = screen(output)
    # Never as wide as the window: a line filling the last column wraps on some terminals.
    assert widest < columns, f"something was drawn {widest} columns wide in a {columns}-column window"
    # No line per capture scrolling under the bar: only the summary remains on screen.
    assert lines == [f"rgbd: {CAPTURES} of {CAPTURES} captures done, 0 failed"], lines
    # The status line was redrawn in place with the count (and, when there is room, the
    # rate and the time left).
    text = output.decode("utf-8")
    drawn = [part for part in re.split(r"\r\x1b\[K|\r\n|\n", text) if part]
    counts = [m.group(1) for part in drawn for m in [re.search(r"\b(\d+)/%d\b" % CAPTURES, part)] if m]
    assert counts[0] == "0" and f"{CAPTURES - 1}" in counts, drawn
    if columns >= 100:
        assert any(re.search(r"\d+(\.\d)?/s", part) and "left" in part for part in drawn), drawn
        assert any("capture-with-a-rather-long-name-" in part for part in drawn), drawn


def test_errors_print_above_the_status_line(rgbd_bin, batch, tmp_path):
    bad = tmp_path / "in"
    shutil.copytree(batch, bad)
    (bad / "capture-with-a-rather-long-name-2.json").write_text("{ not json")
    status, output = run_in_terminal([str(rgbd_bin), "rectify", str(bad), "-o", str(tmp_path / "out")], 60)
    assert status == 1
    lines, _ = screen(output)
    # The error line is as long as it needs (the terminal wraps it); status lines are not.
    status_lines = [part for part in output.decode("utf-8").split("\r\x1b[K") if part and "\n" not in part]
    assert status_lines and max(len(part) for part in status_lines) < 60, status_lines
    assert len(lines) == 2, lines
    assert lines[0].startswith("rgbd: error: ") and "capture-with-a-rather-long-name-2.json" in lines[0], lines
    assert lines[1] == f"rgbd: {CAPTURES - 1} of {CAPTURES} captures done, 1 failed", lines


def test_off_a_terminal_one_line_per_capture(rgbd_bin, batch, tmp_path):
    run = subprocess.run([str(rgbd_bin), "rectify", str(batch), "-o", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    assert "\r" not in run.stderr and "\x1b" not in run.stderr
    done = [line for line in lines if re.fullmatch(r"\[\d+/%d\] .*: done in [\d.]+ s" % CAPTURES, line)]
    assert len(done) == CAPTURES, lines
    assert lines[-1] == f"rgbd: {CAPTURES} of {CAPTURES} captures done, 0 failed"


@pytest.mark.parametrize("command", ["fuse", "cloud"])
def test_scene_commands_show_every_stage(rgbd_bin, tmp_path, command):
    """A scan's fusion or merged cloud on a terminal shows each stage after the frames
    (meshing, writing) on its status line, never wider than the window, and ends with the
    summary alone on the screen: nothing is silent between the last frame and the end."""
    synth = Path(rgbd_bin).with_name("rgbd-synth")
    subprocess.run([str(synth), "scan", "-o", str(tmp_path), "--frames", "6", "--size", "320x240"],
                   check=True, capture_output=True)
    out = tmp_path / "out.ply"
    status, output = run_in_terminal([str(rgbd_bin), command, str(tmp_path / "scan"), "-o", str(out)], 60)
    assert status == 0, output
    drawn = output.decode("utf-8")
    stages = ["meshing", "writing"] if command == "fuse" else ["writing"]
    for stage in stages:
        assert f"scan: {stage}" in drawn, drawn
    assert drawn.index("6/6") < drawn.index(f"scan: {stages[0]}")
    # Every status line drawn in place fits the window (the summary is an ordinary line).
    status_lines = [part for part in drawn.split("\r\x1b[K") if part and "\n" not in part]
    assert status_lines and max(len(part) for part in status_lines) < 60, status_lines
    lines, _ = screen(output)
    assert [line for line in lines if line.strip()] == [lines[-1]] and "out.ply" in lines[-1], lines


def test_scan_preview_says_what_it_wrote(rgbd_bin, tmp_path):
    """rgbd preview of a scan ends with one line naming the sheet (it once printed nothing)."""
    synth = Path(rgbd_bin).with_name("rgbd-synth")
    subprocess.run([str(synth), "scan", "-o", str(tmp_path), "--frames", "6", "--size", "320x240"],
                   check=True, capture_output=True)
    run = subprocess.run([str(rgbd_bin), "preview", str(tmp_path / "scan"), "-o", str(tmp_path / "sheets")],
                         capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == ""
    assert run.stderr.strip().splitlines() == [f"{tmp_path / 'scan'}: 6 frames → {tmp_path / 'sheets' / 'scan.preview.png'}"
                                               + run.stderr.strip().split("scan.preview.png")[-1]]
    assert (tmp_path / "sheets" / "scan.preview.png").is_file()
