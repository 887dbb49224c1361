# Shared by the scripts (sourced, from the repository root): the one SwiftPM build of
# the development scripts, and the repository's own Python virtual environment.

# The build demo.sh and test.sh share, in .build/ (so running one after the other
# compiles once): release mode with testing enabled (the Swift tests use
# `@testable import`). The shipped library and the installed binary are built
# separately by Scripts/build-library.sh.
swift_flags=(-c release -Xswiftc -enable-testing)
swift_build=(swift build "${swift_flags[@]}")

# use_venv REQUIREMENTS_FILE...: makes sure .venv/ (git-ignored) exists and holds the
# packages of the given requirements files, and sets $py to its interpreter. The
# environment is created with $PYTHON, else the first python3 on PATH (Debian's own
# /usr/bin/python3 is fine: nothing is installed into it), and reused by later runs;
# pip runs only for a requirements file that changed since it was last installed.
use_venv() {
  local venv=.venv file stamp sum
  if ! { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c '' 2>/dev/null; }; then
    echo "== creating the Python environment $venv/ (${PYTHON:-python3} -m venv)" >&2
    rm -rf "$venv"
    "${PYTHON:-python3}" -m venv "$venv" || {
      echo "$(basename "$0"): could not create $venv with ${PYTHON:-python3} -m venv" \
        "(on Debian/Ubuntu: apt-get install python3-venv; Scripts/bootstrap.sh --python does)" >&2
      return 1
    }
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install -q --upgrade pip
  fi
  py=$PWD/$venv/bin/python
  mkdir -p "$venv/rgbd-installed"
  for file in "$@"; do
    stamp=$venv/rgbd-installed/$(echo "$file" | tr / _)
    sum=$(cksum <"$file")
    if [ "$(cat "$stamp" 2>/dev/null)" != "$sum" ]; then
      echo "== installing the Python requirements of $file into $venv/" >&2
      PIP_DISABLE_PIP_VERSION_CHECK=1 "$py" -m pip install -q -r "$file"
      echo "$sum" >"$stamp"
    fi
  done
}
