// The Go oracle answers questions about what the Go side of a shared namespace does,
// using only Go's standard library and Debian's robfig/cron v3 package, so that cwork's
// JSON encoder and cron parser can be tested against the real thing
// (tests/json/test_oracle_json.c, tests/time/test_cron_oracle.c; docs/PROTOCOL.md §3.2, §10.1).
// Build and run it with ./run, which tests find through $CWORK_GO_ORACLE.
//
//	run json    one JSON object per input line (job args); prints a JSON array
//	            [compact Go encoding, unique-key suffix] where the args were decoded
//	            into map[string]interface{} first, as Go's enqueuers and workers see
//	            them, or "error: ..." for a line Go refuses.
//	run cron    input lines "SPEC<TAB>UNIX_SECONDS[<TAB>COUNT]"; prints the next COUNT
//	            (default 1) fire times as Unix seconds, separated by spaces ("never"
//	            once robfig finds no further time), or "error: ..." for a spec Go
//	            rejects. The parser options are the Kuper-Tech fork's; the time zone is
//	            the process's (set TZ), unless the spec has TZ=/CRON_TZ=.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom |
	cron.Month | cron.Dow | cron.Descriptor)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "json" && os.Args[1] != "cron") {
		fmt.Fprintln(os.Stderr, "usage: go-oracle json|cron < lines")
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		line := in.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if os.Args[1] == "json" {
			fmt.Fprintln(out, encode(line))
		} else {
			fmt.Fprintln(out, next(line))
		}
	}
}

func encode(line string) string {
	var args map[string]interface{}
	if err := json.Unmarshal([]byte(line), &args); err != nil {
		return "error: " + err.Error()
	}
	plain, err := json.Marshal(args)
	if err != nil {
		return "error: " + err.Error()
	}
	var key bytes.Buffer
	json.NewEncoder(&key).Encode(args)
	pair, _ := json.Marshal([]string{string(plain), key.String()})
	return string(pair)
}

func next(line string) string {
	f := strings.Split(line, "\t")
	if len(f) < 2 {
		return "error: want SPEC<TAB>UNIX_SECONDS[<TAB>COUNT]"
	}
	sched, err := parser.Parse(f[0])
	if err != nil {
		return "error: " + err.Error()
	}
	sec, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return "error: " + err.Error()
	}
	count := 1
	if len(f) > 2 {
		count, _ = strconv.Atoi(f[2])
	}
	t := time.Unix(sec, 0)
	var times []string
	for i := 0; i < count; i++ {
		t = sched.Next(t)
		if t.IsZero() {
			times = append(times, "never")
			break
		}
		times = append(times, strconv.FormatInt(t.Unix(), 10))
	}
	return strings.Join(times, " ")
}
