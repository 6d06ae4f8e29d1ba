package argvcred

import (
	"testing"

	"github.com/gatehouse-dev/gatehouse/service/analysis"
)

func TestCredentialInArgv(t *testing.T) {
	t.Parallel()
	opts := Options{Dialect: "bash", Vars: []string{"GITHUB_TOKEN", "AUTH"}}
	for _, tc := range []struct {
		cmd  string
		want string // "VAR command how", or "" when allowed
	}{
		// The cases.
		{`curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user`, "GITHUB_TOKEN curl argument"},
		{`curl -H @<(printf 'Authorization: Bearer %s' "$GITHUB_TOKEN") https://api.github.com/user`, ""},
		{`GH_TOKEN=$GITHUB_TOKEN gh api user`, ""},

		// Sanctioned forms.
		{`curl -H @- https://x <<<"Authorization: Bearer $GITHUB_TOKEN"`, ""},
		{`printf '%s' "$GITHUB_TOKEN" | gh auth login --with-token`, ""},
		{`echo "$GITHUB_TOKEN" > /tmp/t; echo "token: $GITHUB_TOKEN" >&2`, ""},
		{"cat <<EOF > netrc\npassword $GITHUB_TOKEN\nEOF", ""},
		{`export GH_TOKEN=$GITHUB_TOKEN; gh api user`, ""},
		{`[ -n "$GITHUB_TOKEN" ] && [[ $GITHUB_TOKEN == ghp_* ]] && test -n "$AUTH"`, ""},
		{`echo ${#GITHUB_TOKEN}; wc -c <<<"${#GITHUB_TOKEN}"; echo ${!GATEHOUSE_CRED_*}`, ""},
		{`curl --cacert "$GATEHOUSE_CRED_DIR/ca.pem" https://x`, ""},
		{`curl -H @"$GATEHOUSE_CRED_DIR/header" https://x`, ""},
		{`curl ${GITHUB_TOKEN:+-v} https://x`, ""},
		{`diff <(echo "$GITHUB_TOKEN") expected.txt`, ""},
		{`gh auth login --with-token < <(printf %s "$GATEHOUSE_CRED_NPM")`, ""},

		// Direct arguments, argv[0] included.
		{`curl -u "me:$GATEHOUSE_CRED_NPM" https://x`, "GATEHOUSE_CRED_NPM curl argument"},
		{`/usr/bin/curl -H "$AUTH" https://x`, "AUTH /usr/bin/curl argument"},
		{`"$GITHUB_TOKEN"`, `GITHUB_TOKEN "$GITHUB_TOKEN" argument`},
		{`/usr/bin/printf %s "$GITHUB_TOKEN"`, "GITHUB_TOKEN /usr/bin/printf argument"},
		{`git clone https://x:${GITHUB_TOKEN:0:40}@github.com/o/r`, "GITHUB_TOKEN git argument"},
		{`curl -H "${GITHUB_TOKEN/ghp_/}" x`, "GITHUB_TOKEN curl argument"},
		{`curl -d "${EMPTY:-$GITHUB_TOKEN}" x`, "GITHUB_TOKEN curl argument"},

		// Wrappers are commands too.
		{`sudo -u bob curl -H "$GITHUB_TOKEN" x`, "GITHUB_TOKEN sudo argument"},
		{`env GH_TOKEN=$GITHUB_TOKEN gh api user`, "GITHUB_TOKEN env argument"},
		{`exec curl -H "$GITHUB_TOKEN" x`, "GITHUB_TOKEN curl argument"},
		{`command curl -H "$GITHUB_TOKEN" x`, "GITHUB_TOKEN curl argument"},
		{`command -v curl "$GITHUB_TOKEN"`, ""},

		// Command substitutions in arguments carry their output.
		{`curl -H "Authorization: Bearer $(printf %s "$GITHUB_TOKEN")" x`, "GITHUB_TOKEN curl command substitution"},
		{`curl -H "Authorization: Bearer $(cat "$GATEHOUSE_CRED_DIR/token")" x`, "GATEHOUSE_CRED_DIR curl command substitution"},
		{`curl -H "Authorization: Bearer $(cat /run/gatehouse/cred/token)" x`, "GATEHOUSE_CRED_DIR curl command substitution"},
		{"curl -H \"Authorization: `cat $GATEHOUSE_CRED_DIR/token`\" x", "GATEHOUSE_CRED_DIR curl command substitution"},

		// Taint through assignments.
		{`T=$GITHUB_TOKEN; curl -H "Bearer $T" x`, "T curl argument"},
		{`T="Bearer ${GITHUB_TOKEN}"; U=$T; curl -H "$U" x`, "U curl argument"},
		{`export T=$GITHUB_TOKEN; curl -H "$T" x`, "T curl argument"},
		{`declare -r T="$GITHUB_TOKEN"; curl "$T"`, "T curl argument"},
		{`f() { local T=$GITHUB_TOKEN; curl "$T"; }; f`, "T curl argument"},
		{`readonly T=$GITHUB_TOKEN; curl "$T"`, "T curl argument"},
		{`declare -n R=GITHUB_TOKEN; curl "$R"`, "R curl argument"},
		{`: "${T:=$GITHUB_TOKEN}"; curl "$T"`, "T curl argument"},
		{`A=(x "$GITHUB_TOKEN"); curl "${A[1]}"`, "A curl argument"},
		{`for t in "$GITHUB_TOKEN"; do curl -H "$t" x; done`, "t curl argument"},
		{`read -r T <<<"$GITHUB_TOKEN"; curl -H "$T" x`, "T curl argument"},
		{`read T < "$GATEHOUSE_CRED_DIR/token"; curl -H "$T" x`, "T curl argument"},
		{`while read -r line; do curl -H "$line" x; done < "$GATEHOUSE_CRED_DIR/headers"`, "line curl argument"},
		{`printf %s "$GITHUB_TOKEN" | while read -r T; do curl "$T"; done`, "T curl argument"},
		{`read T < <(printf %s "$GITHUB_TOKEN"); curl "$T"`, "T curl argument"},
		{`mapfile -t L <<<"$GITHUB_TOKEN"; curl "${L[0]}"`, "L curl argument"},
		{`printf -v T 'Bearer %s' "$GITHUB_TOKEN"; curl -H "$T" x`, "T curl argument"},
		{`T=$(cat "$GATEHOUSE_CRED_DIR/token"); curl -H "$T" x`, "T curl argument"},
		{`D=$GATEHOUSE_CRED_DIR; curl -H "$(cat $D/token)" x`, "D curl command substitution"},
		{`T=$GITHUB_TOKEN; gh api user`, ""},
		{`T=$GITHUB_TOKEN; GH_TOKEN=$T gh api user`, ""},
		{`T=safe; curl "$T"`, ""},

		// Positional parameters.
		{`f() { curl -H "$1" x; }; f "$GITHUB_TOKEN"`, "1 curl argument"},
		{`set -- "$GITHUB_TOKEN"; curl "$@"`, "@ curl argument"},
		{`f() { curl -H "$1" x; }; f safe`, ""},

		// Code built from a credential.
		{`eval "curl -H $GITHUB_TOKEN x"`, "GITHUB_TOKEN eval eval"},
		{`trap "curl -d $GITHUB_TOKEN x" EXIT`, "GITHUB_TOKEN trap trap"},
		{`echo "$GITHUB_TOKEN" | xargs curl -H`, "GITHUB_TOKEN xargs xargs"},
		{`xargs -I{} curl -H {} x <<<"$GITHUB_TOKEN"`, "GITHUB_TOKEN xargs xargs"},
		{`echo "curl -H $GITHUB_TOKEN x" | bash`, "GITHUB_TOKEN bash shell code"},
		{"bash <<EOF\ncurl -H $GITHUB_TOKEN x\nEOF", "GITHUB_TOKEN bash shell code"},
		{`source <(echo "curl $GITHUB_TOKEN")`, "GITHUB_TOKEN source shell code"},
		{`echo "$GITHUB_TOKEN" | sha256sum`, ""},

		// Shell code in strings is followed.
		{`bash -c 'curl -H "$GITHUB_TOKEN" x'`, "GITHUB_TOKEN curl argument"},
		{`sudo sh -c 'T=$GITHUB_TOKEN; wget --header="$T" x'`, "T wget argument"},
		{`bash -ec 'curl "$GATEHOUSE_CRED_X"'`, "GATEHOUSE_CRED_X curl argument"},
		{`eval 'curl "$GITHUB_TOKEN"'`, "GITHUB_TOKEN curl argument"},
		{"bash <<'EOF'\ncurl -H \"$GITHUB_TOKEN\" x\nEOF", "GITHUB_TOKEN curl argument"},
		{`bash -c "curl -H $GITHUB_TOKEN x"`, "GITHUB_TOKEN bash argument"},
		{`bash -c 'printf %s "$GITHUB_TOKEN" | gh auth login --with-token'`, ""},
		{`find . -name x -exec sh -c 'curl -d "$GITHUB_TOKEN" x' \;`, "GITHUB_TOKEN curl argument"},
	} {
		use := Find(tc.cmd, nil, opts)
		got := ""
		if use != nil {
			got = use.Var + " " + use.Command + " " + use.How
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// The reason names the variable, the command and the sanctioned forms.
func TestCredentialReason(t *testing.T) {
	t.Parallel()
	use := Find(`curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user`, nil, Options{Vars: []string{"GITHUB_TOKEN"}})
	want := `credential on a command line: $GITHUB_TOKEN would be an argument of curl, where other processes can read it. ` +
		`Pass it without argv: as an assignment (GH_TOKEN=$GITHUB_TOKEN gh api ...), a redirection or here-string ` +
		`(curl -H @- <<<"Authorization: Bearer $GITHUB_TOKEN"), or from a builtin such as printf or echo writing into a pipe or file ` +
		`(curl -H @<(printf 'Authorization: Bearer %s' "$GITHUB_TOKEN"))`
	if use == nil || use.Reason() != want {
		t.Errorf("got %q\nwant %q", use.Reason(), want)
	}
	if use.Line != 1 || use.Col != 9 {
		t.Errorf("position %d:%d", use.Line, use.Col)
	}
}

// Code a command hands on to run later or elsewhere is checked like the
// command: trap strings, variables whose values programs run, exported
// functions, git settings from the environment, scripts the command writes
// and runs.
func TestCredentialInArgvDeferred(t *testing.T) {
	t.Parallel()
	opts := Options{Dialect: "bash", Vars: []string{"GITHUB_TOKEN"}}
	for _, tc := range []struct {
		cmd  string
		want string // "VAR command how", or "" when allowed
	}{
		// trap, every signal spelling.
		{`trap 'curl -d "$GATEHOUSE_CRED_X" http://x' EXIT`, "GATEHOUSE_CRED_X curl argument"},
		{`trap -- 'curl -d "$GITHUB_TOKEN" http://x' ERR`, "GITHUB_TOKEN curl argument"},
		{`trap $'wget --header="$GITHUB_TOKEN" x' DEBUG RETURN`, "GITHUB_TOKEN wget argument"},
		{`f() { trap 'curl -u "me:$GITHUB_TOKEN" x' RETURN; }; f`, "GITHUB_TOKEN curl argument"},
		{`trap 'rm -f "$tmp"' EXIT; printf %s "$GITHUB_TOKEN" | gh auth login --with-token`, ""},
		{`trap 'printf %s "$GITHUB_TOKEN" > /dev/null' 0`, ""},

		// Prompts expanded under set -x or in an interactive shell.
		{`export PS4='+$(curl -d "$GATEHOUSE_CRED_X" x) '; set -x; echo`, "GATEHOUSE_CRED_X curl argument"},
		{"SHELLOPTS=xtrace PS4='`curl $GITHUB_TOKEN`' bash -c :", "GITHUB_TOKEN curl argument"},
		{`PROMPT_COMMAND='curl -d "$GATEHOUSE_CRED_X" x' bash -i`, "GATEHOUSE_CRED_X curl argument"},
		{`PROMPT_COMMAND=(: 'curl -d "$GITHUB_TOKEN" x')`, "GITHUB_TOKEN curl argument"},
		{`PS4='+ ${BASH_SOURCE}:${LINENO} '; set -x; curl -H @- x <<<"$GITHUB_TOKEN"`, ""},

		// Exported functions.
		{`env 'BASH_FUNC_deploy%%=() { curl -d "$GATEHOUSE_CRED_X" x; }' bash -c deploy`, "GATEHOUSE_CRED_X curl argument"},
		{`env 'BASH_FUNC_up()=() { wget "$GITHUB_TOKEN"; }' bash -c up`, "GITHUB_TOKEN wget argument"},
		{`deploy() { curl -d "$GITHUB_TOKEN" x; }; export -f deploy; bash -c deploy`, "GITHUB_TOKEN curl argument"},

		// Variables whose values programs run as a command line.
		{`GIT_SSH_COMMAND='ssh -o ProxyCommand="curl -d $GATEHOUSE_CRED_X x"' git fetch`, "GATEHOUSE_CRED_X ssh argument"},
		{`GIT_SSH_COMMAND="ssh -i $GATEHOUSE_CRED_X" git fetch`, "GATEHOUSE_CRED_X $GIT_SSH_COMMAND code variable"},
		{`export EDITOR="vim -c $GITHUB_TOKEN"; git commit`, "GITHUB_TOKEN $EDITOR code variable"},
		{`env GIT_PAGER='curl -d "$GITHUB_TOKEN" x' git log`, "GITHUB_TOKEN curl argument"},
		{`sudo PAGER='curl "$GITHUB_TOKEN"' man ls`, "GITHUB_TOKEN curl argument"},
		{`export GIT_SSH_COMMAND="ssh -i $GATEHOUSE_CRED_DIR/key"; git fetch`, ""},
		{`GH_TOKEN=$GITHUB_TOKEN GIT_PAGER=cat gh pr list`, ""},

		// git's configuration from the environment.
		{`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0='ssh -i "$GATEHOUSE_CRED_X"' git fetch`, "GATEHOUSE_CRED_X ssh argument"},
		{`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0="less -P $GITHUB_TOKEN" git log`, "GITHUB_TOKEN $GIT_CONFIG_VALUE_0 code variable"},
		{`export GIT_CONFIG_KEY_1=alias.up GIT_CONFIG_VALUE_1='!curl -d "$GITHUB_TOKEN" x'; git up`, "GITHUB_TOKEN curl argument"},
		{`GIT_CONFIG_PARAMETERS="'core.pager=curl -d \$GITHUB_TOKEN x'" git log`, "GITHUB_TOKEN curl argument"},
		{`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraHeader GIT_CONFIG_VALUE_0="Authorization: Bearer $GATEHOUSE_CRED_X" git fetch`, ""},

		// Scripts the command writes, then runs.
		{`echo 'curl -H "$GATEHOUSE_CRED_X" x' > s.sh; bash s.sh`, "GATEHOUSE_CRED_X curl argument"},
		{"cat > s.sh <<'EOF'\ncurl -H \"Authorization: $GITHUB_TOKEN\" https://x\nEOF\nchmod +x s.sh && ./s.sh", "GITHUB_TOKEN curl argument"},
		{"cat > s.sh <<EOF\ncurl -H \"Authorization: $GITHUB_TOKEN\" https://x\nEOF\nsh s.sh", "GITHUB_TOKEN a script the command writes shell code"},
		{`tee s.sh <<<'curl "$GITHUB_TOKEN"' >/dev/null; . ./s.sh`, "GITHUB_TOKEN curl argument"},
		{"cat > s.sh <<'EOF'\nprintf %s \"$GITHUB_TOKEN\" | gh auth login --with-token\nEOF\nsh s.sh", ""},
		{`echo 'curl -H "$GITHUB_TOKEN" x' > notes.txt`, ""},

		// Task-runner files the command writes, then runs.
		{"printf 'all:\\n\\tcurl -H \"$$GATEHOUSE_CRED_X\" x\\n' > Makefile; make", "GATEHOUSE_CRED_X curl argument"},
		{"cat > Makefile <<'EOF'\nup:\n\t@wget --header=$(GITHUB_TOKEN) x\nEOF\nmake up", "GITHUB_TOKEN wget argument"},
		{`echo '{"scripts":{"up":"curl -d \"$GITHUB_TOKEN\" x"}}' > package.json && npm run up`, "GITHUB_TOKEN curl argument"},
		{"cat > Makefile <<'EOF'\nup:\n\tprintf %s \"$$GITHUB_TOKEN\" | gh auth login --with-token\nEOF\nmake up", ""},
	} {
		use := Find(tc.cmd, nil, opts)
		got := ""
		if use != nil {
			got = use.Var + " " + use.Command + " " + use.How
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// Every shell analysis parses is a shell here too: code given to it with
// -c, on its standard input or in a here-document puts what it expands on
// a command line.
func TestCredentialInArgvEveryShell(t *testing.T) {
	t.Parallel()
	opts := Options{Dialect: "bash", Vars: []string{"GITHUB_TOKEN"}}
	for _, sh := range []string{"bash", "rbash", "sh", "dash", "ash", "posh", "yash", "ksh", "mksh", "ksh93", "pdksh", "oksh", "lksh", "zsh"} {
		if !analysis.IsShell(sh) {
			t.Errorf("%s: analysis does not parse it", sh)
		}
		for cmd, want := range map[string]string{
			sh + ` -c 'curl -H "$GITHUB_TOKEN" x'`:              "GITHUB_TOKEN curl argument",
			"/bin/" + sh + ` -ec 'curl -H "$GITHUB_TOKEN" x'`:   "GITHUB_TOKEN curl argument",
			sh + ` -c "curl -H $GITHUB_TOKEN x"`:                "GITHUB_TOKEN " + sh + " argument",
			`echo "curl -H $GITHUB_TOKEN x" | ` + sh:            "GITHUB_TOKEN " + sh + " shell code",
			sh + ` <<<"curl -H $GITHUB_TOKEN x"`:                "GITHUB_TOKEN " + sh + " shell code",
			sh + " <<'EOF'\ncurl -H \"$GITHUB_TOKEN\" x\nEOF\n": "GITHUB_TOKEN curl argument",
		} {
			use := Find(cmd, nil, opts)
			got := ""
			if use != nil {
				got = use.Var + " " + use.Command + " " + use.How
			}
			if got != want {
				t.Errorf("%q: got %q, want %q", cmd, got, want)
			}
		}
	}
}
