#!/usr/bin/env bash
# Compiles rail-core with its test sources (where the benchmark programs live, braid.bench.*) and
# prints the class path that runs them: rail-core's classes, its test classes and its test-scope
# dependencies, with this tree's test-support classes in front of any installed copy (the
# benchmarks use its Deadline). The benchmark scripts share it: CP=$(bench/rail-core-cp.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/rail-core/target/bench-classpath.txt"
{
  mvn -q -B -pl rail-core -am test-compile
  mvn -q -B -pl rail-core org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$out" -Dmdep.includeScope=test
} >&2
echo "$PWD/rail-core/target/classes:$PWD/rail-core/target/test-classes:$PWD/test-support/target/classes:$(cat "$out")"
