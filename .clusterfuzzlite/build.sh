#!/bin/bash -eu
# One build script for OSS-Fuzz and ClusterFuzzLite: targets, seed corpus
# zips, dictionaries and options all come from fuzz/fuzzers.txt.
exec "$SRC/iwarpkit/fuzz/oss-fuzz/build.sh"
