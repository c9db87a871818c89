module github.com/gatewayapis/testkit

go 1.26.8

require github.com/fzipp/gocyclo v0.6.0
