module github.com/gatewayapis/devstack

go 1.26.8

require (
	github.com/gatewayapis/patentsvc v0.0.0
	github.com/gatewayapis/testkit v0.0.0
	github.com/gatewayapis/vinsvc v0.0.0
)

require github.com/fzipp/gocyclo v0.6.0 // indirect

replace (
	github.com/gatewayapis/patentsvc => ../patentsvc
	github.com/gatewayapis/shared => ../shared
	github.com/gatewayapis/testkit => ../testkit
	github.com/gatewayapis/vinsvc => ../vinsvc
)
