package analysis_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// benchOneLiner is a typical agent command, about 200 bytes.
const benchOneLiner = `cd "$(git rev-parse --show-toplevel)" && go test ./service/... -run 'TestCorpus|TestAnalyze' -count=1 2>&1 | tee /tmp/test.log | grep -E '^(ok|FAIL|---)' | head -n 40; echo "exit=$?"`

// benchBlock is one screenful of a realistic build script: functions,
// loops, conditionals, pipelines, a here-document and substitutions.
const benchBlock = `
# Build one component and report.
build_component() {
  local name="$1" dir="$2"
  if [ ! -d "$dir" ]; then
    echo "missing $dir" >&2
    return 1
  fi
  ( cd "$dir" && go build -o "bin/$name" ./cmd/"$name" ) || return 1
  count=$(find "$dir" -name '*.go' | wc -l)
  echo "built $name from $count files"
}

for comp in api worker scheduler; do
  build_component "$comp" "./services/$comp" || exit 1
done

case "${MODE:-dev}" in
  prod) flags="-trimpath -ldflags=-s" ;;
  dev|test) flags="-race" ;;
  *) echo "unknown mode" >&2; exit 2 ;;
esac

while read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  key="${line%%=*}"; value="${line#*=}"
  printf '%s -> %s\n' "$key" "$value"
done < config.env

cat > summary.txt <<END_OF_SUMMARY
mode: ${MODE:-dev}
flags: $flags
END_OF_SUMMARY
total=0
for f in logs/*.log; do
  n=$(grep -c ERROR "$f" || true)
  total=$((total + n))
done
echo "errors: $total" | tee -a summary.txt
`

// benchScript returns a script of benchBlocks, 64 KiB long.
func benchScript() string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\nset -euo pipefail\n")
	for b.Len()+len(benchBlock) < 64<<10 {
		b.WriteString(benchBlock)
	}
	for b.Len() < 64<<10-1 {
		b.WriteString("#")
	}
	b.WriteString("\n")
	return b.String()
}

func benchOptions(b *testing.B) analysis.Options {
	return analysis.Options{
		Dialect: "bash", Dir: b.TempDir(),
		Env: map[string]string{"HOME": "/home/u", "PATH": "/usr/local/bin:/usr/bin:/bin", "USER": "u"},
	}
}

func BenchmarkAnalyzeOneLiner(b *testing.B) {
	opts := benchOptions(b)
	pol := defaultPolicy()
	b.SetBytes(int64(len(benchOneLiner)))
	b.ReportAllocs()
	for b.Loop() {
		policy.Decide(analysis.Analyze(benchOneLiner, opts), pol)
	}
}

func BenchmarkAnalyzeScript64K(b *testing.B) {
	script := benchScript()
	if len(script) != 64<<10 {
		b.Fatalf("script is %d bytes", len(script))
	}
	opts := benchOptions(b)
	pol := defaultPolicy()
	b.SetBytes(int64(len(script)))
	b.ReportAllocs()
	for b.Loop() {
		t := analysis.Analyze(script, opts)
		if t.ParseError != nil {
			b.Fatal(t.ParseError)
		}
		policy.Decide(t, pol)
	}
}
