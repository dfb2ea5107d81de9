# Sourced first by every script in bench/: given -h or --help, prints the calling script's leading
# comment (what it measures, what it needs, its usage) and exits 0, before anything is built or
# started. In a script: . "$(dirname "$0")/usage.sh"
case "${1:-}" in
  -h | --help)
    sed -n '2,${/^#/!q;s/^# \{0,1\}//p}' "$0"
    exit 0
    ;;
esac

# braid_jar: prints the path of samples/target/braid.jar (every benchmark program is in it: braid bench,
# braid.bench.*, braid.mpi.bench.*, the collectives' CollBench, OffloadBench, HierBench), building it
# first if it is missing: offline, without the Kotlin daemon (a daemon left behind would take a core
# from the runs). After changing the sources, rebuild with the README's build.
braid_jar() {
  local jar=samples/target/braid.jar
  if [[ ! -f $jar ]]; then
    mvn -o -q -B -Dkotlin.compiler.daemon=false package -DskipTests >&2
  fi
  echo "$jar"
}
