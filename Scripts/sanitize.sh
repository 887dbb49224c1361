#!/usr/bin/env bash
# Runs rgbd under the sanitizers, each build in its own scratch directory:
#   AddressSanitizer (.build-asan): every Swift test (the CLI tests run the ASan-built
#     rgbd), the rgbd binary on the sample and on every malformed fixture, and the fuzz
#     targets replaying their corpora and past findings (Fuzz/);
#   ThreadSanitizer (.build-tsan): every Swift test, and Tests/c/threads.c (4 threads on
#     one capture handle) built with -fsanitize=thread against libRGBDKit built with
#     -sanitize=thread. That library must link the Swift runtime and libdispatch
#     dynamically (a plain `swift build`, no -static-stdlib): TSan then sees the
#     happens-before of libdispatch's queues and groups.
# Every step runs; exits 1 if any failed or reported, listing them at the end.
#   ./Scripts/sanitize.sh [address|thread]...      (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."

kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(address thread)

./Scripts/bootstrap.sh

# Swift's crash handler would catch a sanitizer's signal first and hide its report; gold
# fails on sanitizer-instrumented Swift objects (internal error in dwarf_reader.cc): lld.
export SWIFT_BACKTRACE=enable=no
linker=()
[ "$(uname -s)" = Linux ] && linker=(-Xswiftc -use-ld=lld)
sample=Examples/sample/shot.json
fixtures=Tests/RGBDKitTests/Fixtures/malformed

step() { echo "== $*" >&2; }
failed=()
# A test run's verdicts and any sanitizer report, without the passing tests' chatter.
summary() { grep -E '^(✘|✔ Test run)|ERROR|WARNING: ThreadSanitizer|SUMMARY|^ +#[0-9]+ |Fatal error' || true; }

address() {
    local flags=(-c release --scratch-path .build-asan --sanitize=address -Xswiftc -enable-testing "${linker[@]}")
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
    export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/Scripts/lsan-suppressions.txt:print_suppressions=0}"
    step "AddressSanitizer: building (release, testing enabled, .build-asan)"
    swift build "${flags[@]}" --build-tests 2>&1 | { grep -v '^\[' || true; } >&2
    step "AddressSanitizer: swift tests"
    swift test "${flags[@]}" --skip-build 2>&1 | summary || failed+=("AddressSanitizer: swift tests")
    local bin out
    bin="$(swift build "${flags[@]}" --show-bin-path)"
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' RETURN

    step "AddressSanitizer: rgbd on the sample"
    if ! "$bin/rgbd" rectify "$sample" -o "$out/rectify" -q || ! "$bin/rgbd" cloud "$sample" -o "$out/cloud.ply" --normals -q \
        || [ "$(ls "$out/rectify" | wc -l)" -ne 4 ] || [ ! -s "$out/cloud.ply" ]; then
        failed+=("AddressSanitizer: rgbd on the sample")
    fi

    step "AddressSanitizer: rgbd on the malformed fixtures (each one clear error, nothing written)"
    local fixture status errors
    for fixture in "$fixtures"/*.json; do
        for command in rectify cloud; do
            set +e
            errors="$("$bin/rgbd" "$command" "$fixture" --image "${sample%.json}.jpg" -o "$out/bad" -q 2>&1 >/dev/null)"
            status=$?
            set -e
            if [ "$status" -ne 1 ] || grep -q Sanitizer <<< "$errors" \
                || [ "$(grep -c "error: .*$(basename "$fixture")" <<< "$errors")" -ne 1 ]; then
                echo "rgbd $command $fixture: status $status" >&2
                echo "$errors" >&2
                failed+=("AddressSanitizer: rgbd $command $fixture")
            fi
        done
    done
    if [ -e "$out/bad" ] && [ -n "$(ls -A "$out/bad")" ]; then
        failed+=("AddressSanitizer: output written for a malformed fixture: $(ls "$out/bad")")
    fi

    step "AddressSanitizer: fuzz targets replaying their corpora and past findings"
    local target
    # Every target with a corpus (Fuzz/corpus/<target>/), so a new one is never left out.
    for target in $(ls Fuzz/corpus); do
        "$bin/$target" "Fuzz/corpus/$target" "Fuzz/regressions/$target" \
            || failed+=("AddressSanitizer: $target on its corpus and past findings")
    done
}

thread() {
    local flags=(-c release --scratch-path .build-tsan --sanitize=thread -Xswiftc -enable-testing "${linker[@]}")
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
    step "ThreadSanitizer: building (release, testing enabled, .build-tsan)"
    swift build "${flags[@]}" --build-tests 2>&1 | { grep -v '^\[' || true; } >&2
    step "ThreadSanitizer: swift tests"
    swift test "${flags[@]}" --skip-build 2>&1 | summary || failed+=("ThreadSanitizer: swift tests")
    local bin program
    bin="$(swift build "${flags[@]}" --show-bin-path)"
    program="$(mktemp)"
    trap 'rm -f "$program"' RETURN
    step "ThreadSanitizer: Tests/c/threads.c against $bin/libRGBDKit.so"
    # The TSan runtime's libdispatch interceptors need libdispatch and the blocks runtime
    # of the toolchain the library was built with.
    local runtime
    runtime="$(dirname "$(dirname "$(command -v swift)")")/lib/swift/linux"
    clang -std=c99 -g -O1 -fsanitize=thread -pthread -I Sources/CRGBD/include Tests/c/threads.c \
        -L "$bin" -lRGBDKit -L "$runtime" -ldispatch -lBlocksRuntime \
        -Wl,-rpath,"$bin" -Wl,-rpath,"$runtime" -lm -o "$program"
    "$program" "$sample" || failed+=("ThreadSanitizer: Tests/c/threads.c")
}

for kind in "${kinds[@]}"; do
    case "$kind" in
        address) address ;;
        thread) thread ;;
        *) echo "usage: $0 [address|thread]..." >&2; exit 2 ;;
    esac
done
if [ ${#failed[@]} -gt 0 ]; then
    step "sanitizers: ${#failed[@]} failure(s)"
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
step "sanitizers: clean (${kinds[*]})"
