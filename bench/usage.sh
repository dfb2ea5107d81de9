# Sourced first by every script in bench/: given -h or --help, prints the calling script's leading
# comment (what it measures, what it needs, its usage) and exits 0, before anything is built or
# started. In a script: . "$(dirname "$0")/usage.sh"
case "${1:-}" in
  -h | --help)
    sed -n '2,${/^#/!q;s/^# \{0,1\}//p}' "$0"
    exit 0
    ;;
esac
