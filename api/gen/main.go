// Command gen imports the GameLift service model and generates the api package from it.
//
// Import botocore's model into the committed, stripped model (no documentation text):
//
//	go run ./api/gen -import .../gamelift/2015-10-01/service-2.json.gz -model api/model/gamelift.json
//
// Generate the zz_*.go files of package api from the stripped model (what `go generate ./api`
// runs):
//
//	go run ./gen -model model/gamelift.json -out .
//
// The generated code avoids the top-level names of the hand-written files in the -hand
// directory (default: the -out directory).
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	importPath := flag.String("import", "", "botocore service-2.json(.gz) to strip into -model")
	modelPath := flag.String("model", "", "the stripped model (written with -import, else read)")
	outDir := flag.String("out", "", "directory to write the generated zz_*.go files into")
	handDir := flag.String("hand", "", "directory of the hand-written api files (default -out)")
	flag.Parse()
	if err := run(*importPath, *modelPath, *outDir, *handDir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(importPath, modelPath, outDir, handDir string) error {
	if modelPath == "" {
		return fmt.Errorf("-model is required")
	}
	if importPath != "" {
		if err := importModel(importPath, modelPath); err != nil {
			return err
		}
	}
	if outDir == "" {
		if importPath == "" {
			return fmt.Errorf("nothing to do: give -import and/or -out")
		}
		return nil
	}
	if handDir == "" {
		handDir = outDir
	}
	m, err := readModel(modelPath)
	if err != nil {
		return err
	}
	return generate(m, outDir, handDir)
}

// importModel strips the botocore model at src and writes it to dst.
func importModel(src, dst string) error {
	m, err := readModel(src)
	if err != nil {
		return err
	}
	b, err := encodeModel(m)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
