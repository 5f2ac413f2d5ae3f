// The differential oracle: Go's standard library and Debian's robfig/cron v3 package
// (golang-github-robfig-cron-dev), never a download. See run.
module cwork.invalid/oracle

go 1.19

require github.com/robfig/cron/v3 v3.0.1

replace github.com/robfig/cron/v3 => /usr/share/gocode/src/github.com/robfig/cron
