#!/bin/bash -eu
# SPDX-License-Identifier: GPL-2.0-or-later
# One build script for OSS-Fuzz and ClusterFuzzLite: targets, seed corpus
# zips, dictionaries and options all come from fuzz/fuzzers.txt.
exec "$SRC/iwarpkit/fuzz/oss-fuzz/build.sh"
