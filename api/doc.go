// Package api is the GameLift control-plane API as Go: one type per model shape, the table of
// all operations, validators built from the model's constraints, and the table of errors.
//
// Most of the package is generated (zz_*.go) by ./gen from the stripped GameLift service model
// committed in model/gamelift.json; run `go generate ./api` after changing either. The
// hand-written files hold what the generated code builds on: Timestamp, Error and the
// validator. The package imports no transport and no storage; every other layer imports it.
package api

//go:generate go run ./gen -model model/gamelift.json -out .
