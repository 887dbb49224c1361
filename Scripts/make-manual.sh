#!/usr/bin/env bash
# Writes rgbd's manual page, rgbd.1 (man(7) macros), on stdout, generated from the
# commands' own help: the main command's help as DESCRIPTION, then one section per
# subcommand with its help as `rgbd SUBCOMMAND --help` prints it, so the page says
# exactly what the binary says. Used by install.sh; read it with `man -l rgbd.1`.
#
#   Scripts/make-manual.sh PATH-TO-RGBD > rgbd.1
#
# (swift-argument-parser's generate-manual plugin would build every product of the
# package once more in its own configuration; this needs only the built binary.)
set -euo pipefail

if [ $# -ne 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 PATH-TO-RGBD" >&2
  exit 2
fi
bin=$1

# The help as wide as a terminal of 80 columns shows it under man's indentation.
help() { COLUMNS=72 "$bin" "$@" --help; }
# roff: backslashes as \e, hyphens as \- (options print as typed), and a line starting
# with . or ' is text, not a request.
# Characters beyond ASCII (×, …) as groff's \[uXXXX], which every troff reads whatever
# the locale (with perl; without it they stay UTF-8, as the coding line says).
escape() {
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" |
    if command -v perl >/dev/null 2>&1; then
      perl -CS -pe 's/([^\x00-\x7f])/sprintf("\\[u%04X]", ord($1))/ge'
    else
      cat
    fi
}

version=$("$bin" --version)
main=$(help)
# The subcommands, as the main help lists them (two spaces, then the name).
subcommands=$(printf '%s\n' "$main" | awk '/^SUBCOMMANDS:/ { on = 1; next } on && /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }')
[ -n "$subcommands" ] || { echo "$0: no subcommands in '$bin --help'" >&2; exit 1; }
# NAME: the overview's first paragraph, on one line.
abstract=$(printf '%s\n' "$main" | awk 'NR == 1 { sub(/^OVERVIEW: /, "") } /^$/ { exit } { printf "%s%s", (NR > 1 ? " " : ""), $0 }')

# The coding line lets man(1) read the help's UTF-8 (×, …) whatever the locale.
echo '.\" -*- coding: UTF-8 -*-'
echo ".TH RGBD 1 \"\" \"rgbd $version\" \"User Commands\""
# Left-aligned, no hyphenation: option names stay whole.
echo ".ad l"
echo ".nh"
echo ".SH NAME"
printf 'rgbd \\- %s\n' "$(printf '%s\n' "$abstract" | escape)"
echo ".SH SYNOPSIS"
# One usage a paragraph, filled (the long ones wrap). Every line of the help is read (a
# reader that stopped early would end the help with SIGPIPE).
for sub in $subcommands; do
  echo ".PP"
  help "$sub" | awk '/^USAGE: / && !done { sub(/^USAGE: /, ""); print; done = 1 }' | escape
done
echo ".PP"
echo "rgbd \-\-version"
echo ".SH DESCRIPTION"
echo ".nf"
printf '%s\n' "$main" | sed -e '1s/^OVERVIEW: //' | escape
echo ".fi"
echo ".SH COMMANDS"
for sub in $subcommands; do
  echo ".SS rgbd $sub"
  echo ".nf"
  # The usage line, as long as the options make it, filled (wrapped) like the synopsis.
  help "$sub" | sed -e '1s/^OVERVIEW: //' | escape | awk '/^USAGE: / { print ".fi"; print; print ".nf"; next } { print }'
  echo ".fi"
done
echo ".SH SEE ALSO"
echo "The documentation of rgbd's source, docs/cli.md (the commands), docs/format.md (the"
echo "capture files), docs/outputs.md (what is written) and docs/library.md (C and Python)."
