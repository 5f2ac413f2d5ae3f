#!/bin/bash
# `cwork completion bash` run in bash: completing COMP_WORDS as a shell would offers the
# commands, a command's options from its option table, the values of an option that
# takes a few words, and a set command's actions; `cwork completion zsh` loads in zsh
# when zsh is there. Also `cwork man` is a man page that names every listed command.
#   completion_check.sh CWORK
set -eu
cwork=$1
fail() {
    echo "FAIL: $*"
    exit 1
}
# complete WORDS...: the COMPREPLY for the last word, space-separated
complete_words() {
    bash -c 'source <("$0" completion bash)
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _cwork
        echo "${COMPREPLY[*]}"' "$cwork" "$@"
}
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }

r=$(complete_words cwork st)
has "$r" stats || fail "cwork st<TAB> gave '$r', not stats"
r=$(complete_words cwork "")
for c in enqueue work dead scheduled stats web completion; do
    has "$r" "$c" || fail "cwork <TAB> lacks $c: '$r'"
done
has "$r" man && fail "cwork <TAB> offers the hidden man command"
r=$(complete_words cwork stats --d)
test "$r" = "--days" || fail "cwork stats --d<TAB> gave '$r'"
r=$(complete_words cwork dead --)
for o in --page --name --grep --order --json --redis --ns --help; do
    has "$r" "$o" || fail "cwork dead --<TAB> lacks $o: '$r'"
done
has "$r" --no-periodic && fail "cwork dead --<TAB> offers scheduled's --no-periodic"
r=$(complete_words cwork scheduled --no)
test "$r" = "--no-periodic" || fail "cwork scheduled --no<TAB> gave '$r'"
r=$(complete_words cwork dead --order "")
test "$r" = "newest oldest" || fail "cwork dead --order <TAB> gave '$r'"
r=$(complete_words cwork queues --go-flavor u)
test "$r" = "upstream" || fail "cwork queues --go-flavor u<TAB> gave '$r'"
r=$(complete_words cwork dead "")
test "$r" = "retry delete trim" || fail "cwork dead <TAB> gave '$r'"
r=$(complete_words cwork web --l)
test "$r" = "--listen" || fail "cwork web --l<TAB> gave '$r'"
r=$(complete_words cwork enqueue --batch-)
test "$r" = "--batch-callback --batch-size" || fail "cwork enqueue --batch-<TAB> gave '$r'"
r=$(complete_words cwork work --kill)
test "$r" = "--kill-grace" || fail "cwork work --kill<TAB> gave '$r'"
r=$(complete_words cwork work --)
for o in --job --concurrency --timeout --keep-succeeded-for --quiet --redis --help; do
    has "$r" "$o" || fail "cwork work --<TAB> lacks $o: '$r'"
done
has "$r" -- && fail "cwork work --<TAB> offers the job options' heading as \"--\""
r=$(complete_words cwork succeeded --)
for o in --name --limit --json --redis --ns --help; do
    has "$r" "$o" || fail "cwork succeeded --<TAB> lacks $o: '$r'"
done
r=$(complete_words cwork result --w)
test "$r" = "--wait" || fail "cwork result --w<TAB> gave '$r'"
r=$(complete_words cwork doctor --r)
test "$r" = "--repair --redis" || fail "cwork doctor --r<TAB> gave '$r'"
r=$(complete_words cwork limits --)
has "$r" --json || fail "cwork limits --<TAB> lacks --json: '$r'"
r=$(complete_words cwork limit --go-flavor "")
test "$r" = "fork upstream" || fail "cwork limit --go-flavor <TAB> gave '$r'"
r=$(complete_words cwork demo --)
for o in --rate --concurrency --duration --listen --no-web --redis --ns --help; do
    has "$r" "$o" || fail "cwork demo --<TAB> lacks $o: '$r'"
done
has "$r" --go-flavor && fail "cwork demo --<TAB> offers --go-flavor, which the demo refuses"
r=$(complete_words cwork completion "")
test "$r" = "bash zsh" || fail "cwork completion <TAB> gave '$r'"

if command -v zsh >/dev/null 2>&1; then
    zsh -fc 'source <("$0" completion zsh) && (( $+functions[_cwork] ))' "$cwork" ||
        fail "the zsh script does not load"
fi
"$cwork" completion fish >/dev/null 2>&1 && fail "completion fish was accepted"

m=$("$cwork" man)
echo "$m" | grep -q '^\.TH CWORK 1' || fail "cwork man has no .TH"
for c in enqueue work stats dead scheduled web batch limits limit result succeeded doctor demo; do
    echo "$m" | grep -q "^\.SH CWORK $c" || fail "cwork man lacks $c's section"
done
echo "$m" | grep -q 'no\\-periodic' || fail "cwork man lacks --no-periodic"
echo "$m" | grep -q 'kill\\-grace' || fail "cwork man lacks work's --kill-grace"
echo "$m" | grep -q '^Job options apply' || fail "cwork man lacks work's job options heading"
echo "$m" | grep -q '^\.B \\-\\-repair' || fail "cwork man lacks doctor's --repair"
echo ok
