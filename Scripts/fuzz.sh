#!/usr/bin/env bash
# Fuzzes rgbd: builds the fuzz targets of Fuzz/ with libFuzzer and AddressSanitizer (in
# .build-fuzz, apart from the normal build), replays every past finding
# (Fuzz/regressions/), then runs each target for SECONDS (default 60) on its seed corpus
# (Fuzz/corpus/, plus what earlier runs found, kept in .build-fuzz/corpus/) and prints
# executions, coverage and findings. Exits 1 if anything was found: the input is saved in
# .build-fuzz/findings/<target>/ (keep it in Fuzz/regressions/<target>/ once fixed).
#
#   ./Scripts/fuzz.sh [SECONDS] [TARGET...]     targets: FuzzJSON FuzzImage FuzzCAPI FuzzLens FuzzPortrait
#                                                FuzzDepthImage FuzzScanTables FuzzLZFSE FuzzZIP FuzzEXIF
#                                                FuzzEXR FuzzVideo
#
# Needs the Swift toolchain's libFuzzer (Linux; Apple's Xcode toolchain has none).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(FuzzJSON FuzzImage FuzzCAPI FuzzLens FuzzPortrait FuzzDepthImage FuzzScanTables FuzzLZFSE
                                 FuzzZIP FuzzEXIF FuzzEXR FuzzVideo)
scratch=.build-fuzz

./Scripts/bootstrap.sh

# -sanitize=fuzzer instruments every Swift module for coverage and links libFuzzer;
# clang's C targets get the same. gold fails on ASan-instrumented Swift objects
# (internal error in dwarf_reader.cc), so lld links.
flags=(-c release --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address
       -Xcc -fsanitize=fuzzer-no-link,address)
[ "$(uname -s)" = Linux ] && flags+=(-Xswiftc -use-ld=lld)
echo "== building ${targets[*]} with -sanitize=fuzzer,address (in $scratch)" >&2
for target in "${targets[@]}"; do
    swift build "${flags[@]}" --product "$target" 2>&1 | { grep -v '^\[' || true; } >&2
done
bin="$(swift build "${flags[@]}" --show-bin-path)"

# Swift's own crash handler would catch the signal before ASan and hide the stack.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"

max_len() {
    case "$1" in
        FuzzJSON) echo 4096 ;;
        FuzzImage|FuzzCAPI|FuzzDepthImage|FuzzLZFSE|FuzzZIP|FuzzEXR|FuzzVideo) echo 8192 ;;
        FuzzPortrait) echo 16384 ;;
        FuzzScanTables|FuzzEXIF) echo 2048 ;;
        *) echo 1024 ;;
    esac
}

status=0
summary=()
for target in "${targets[@]}"; do
    work="$scratch/corpus/$target" findings="$scratch/findings/$target" log="$scratch/logs/$target.log"
    mkdir -p "$work" "$findings" "$(dirname "$log")"
    # Findings are counted from this run only: inputs an earlier run left in $findings
    # stay there (to be kept in Fuzz/regressions/ once fixed) without failing this one.
    start="$log.start"
    touch "$start"
    dict=()
    case "$target" in FuzzJSON|FuzzCAPI) dict=(-dict=Fuzz/json.dict) ;; esac
    # FuzzDepthImage: no input may make rgbd allocate 200 MB at once (docs/format.md, "Limits").
    limits=()
    # FuzzLZFSE and FuzzZIP: their output limits (1 MiB, 16 MiB) bound what they allocate;
    # FuzzEXR: the 16-megapixel bound on both windows, checked before pixels are allocated.
    # (FuzzVideo has none: a video's frames may be up to 100 megapixels, VideoDecoder.maxPixels.)
    case "$target" in FuzzDepthImage|FuzzScanTables|FuzzLZFSE|FuzzZIP|FuzzEXR) limits=(-malloc_limit_mb=200) ;; esac

    # Every past finding, whole (the fuzzing run below truncates inputs to -max_len).
    regressions=(Fuzz/regressions/"$target"/*)
    if [ -e "${regressions[0]}" ]; then
        echo "== $target: replaying ${#regressions[@]} past findings" >&2
        if ! "$bin/$target" -artifact_prefix="$findings/" "${limits[@]}" "${regressions[@]}" > "$log.regressions" 2>&1; then
            tail -40 "$log.regressions" >&2
            summary+=("$target: a past finding fails again (log: $log.regressions)")
            status=1
            continue
        fi
    fi

    echo "== $target: fuzzing for $seconds s" >&2
    set +e
    "$bin/$target" "$work" "Fuzz/corpus/$target" "${dict[@]}" -max_len="$(max_len "$target")" \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 "${limits[@]}" -print_final_stats=1 \
        -artifact_prefix="$findings/" > "$log" 2>&1
    code=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    # (No progress line at all when a seed input crashed: grep finds nothing, which
    # must not end the script before the summary.)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<< "$last")
    found=$(find "$findings" -type f -newer "$start" | wc -l)
    line="$target: ${runs:-?} executions in ${seconds} s (${speed:-?}/s), coverage ${cov:-?} edges / ${ft:-?} features, corpus ${corp:-?}, peak RSS ${rss:-?} MB, findings $found"
    if [ "$code" -ne 0 ] || [ "$found" -ne 0 ]; then
        grep -E 'ERROR|finding|Fatal error|SUMMARY|Test unit written' "$log" | head -20 >&2 || true
        line+=" (exit $code; log: $log)"
        status=1
    fi
    echo "$line" >&2
    summary+=("$line")
done

echo "== fuzzing summary" >&2
printf '%s\n' "${summary[@]}"
exit "$status"
