#!/usr/bin/env bash
# Session 43 run 3, for an H200 only (issue 6's figures are the H200's): run 2 (base against
# f023021, torch beside them) in two rounds. On any other GPU it stops at once.
# Usage: `. .gpu/env.sh; bash docs/data/session43/run3.sh $OUT` with .gpu/ and .exp/ carried.
OUT=${1:?}
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
ROUNDS=${ROUNDS:-2} bash docs/data/session43/run2.sh $OUT
