#!/usr/bin/env bash
# Compiles rail-core with its test sources (where the benchmark programs live, braid.bench.*) and
# prints the class path that runs them: rail-core's classes, its test classes and its test-scope
# dependencies (this tree's test-support among them: the benchmarks use its Deadline). The
# benchmark scripts share it: CP=$(bench/rail-core-cp.sh). Usage: bench/rail-core-cp.sh
set -euo pipefail
. "$(dirname "$0")/usage.sh"
cd "$(dirname "$0")/.."
out="$PWD/rail-core/target/bench-classpath.txt"
# One reactor build, so braid-test-support resolves to this tree's module, not to an installed copy
# (a fresh clone has none). Every module of the reactor writes the file; rail-core, built last, wins.
mvn -q -B -Dkotlin.compiler.daemon=false -pl rail-core -am test-compile org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
  -Dmdep.outputFile="$out" -Dmdep.includeScope=test >&2
echo "$PWD/rail-core/target/classes:$PWD/rail-core/target/test-classes:$(cat "$out")"
