#!/bin/sh
# Cross-check the decoder with Debian's `cpuid` tool on every shared dump.
command -v cpuid >/dev/null 2>&1 || { echo "skip: the cpuid tool is not installed (apt-get install cpuid)"; exit 77; }
exec python3 "$(dirname "$0")/oracle_cpuid.py"
