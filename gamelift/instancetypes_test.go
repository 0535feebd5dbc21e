package gamelift

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestInstanceTypesCoverTheEnum checks that every EC2InstanceType of the GameLift model has
// a size, and that the table names no other type.
func TestInstanceTypesCoverTheEnum(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "api", "model", "gamelift.json"))
	if err != nil {
		t.Fatal(err)
	}
	var model struct {
		Shapes map[string]struct {
			Enum []string `json:"enum"`
		} `json:"shapes"`
	}
	if err := json.Unmarshal(b, &model); err != nil {
		t.Fatal(err)
	}
	enum := model.Shapes["EC2InstanceType"].Enum
	if len(enum) < 500 {
		t.Fatalf("the model lists %d instance types", len(enum))
	}
	in := map[string]bool{}
	for _, name := range enum {
		in[name] = true
		it, ok := LookupInstanceType(name)
		if !ok || it.VCPUs < 1 || it.MemoryMiB < 1024 {
			t.Errorf("%s: %+v, %v", name, it, ok)
		}
	}
	for name := range instanceTypes {
		if !in[name] {
			t.Errorf("%s is not a GameLift instance type", name)
		}
	}
}

// TestInstanceTypeFigures checks sizes against Amazon's published EC2 specifications, among
// them every type that breaks its family's pattern.
func TestInstanceTypeFigures(t *testing.T) {
	gib := func(g float64) int64 { return int64(g * 1024) }
	for name, want := range map[string]InstanceType{
		"t2.micro": {1, 1024}, "t2.large": {2, gib(8)}, "c3.large": {2, gib(3.75)}, "c3.8xlarge": {32, gib(60)},
		"c4.8xlarge": {36, gib(60)}, "c5.large": {2, gib(4)}, "c5.9xlarge": {36, gib(72)}, "c5.24xlarge": {96, gib(192)},
		"c5n.large": {2, gib(5.25)}, "c5n.9xlarge": {36, gib(96)}, "c5n.18xlarge": {72, gib(192)},
		"m3.medium": {1, gib(3.75)}, "m4.10xlarge": {40, gib(160)}, "m5.xlarge": {4, gib(16)},
		"r3.large": {2, gib(15.25)}, "r4.16xlarge": {64, gib(488)}, "r5.24xlarge": {96, gib(768)},
		"c6g.medium": {1, gib(2)}, "c7g.16xlarge": {64, gib(128)}, "m7a.medium": {1, gib(4)},
		"r6a.48xlarge": {192, gib(1536)}, "c6i.32xlarge": {128, gib(256)}, "g5g.xlarge": {4, gib(8)},
		"g5g.16xlarge": {64, gib(128)}, "c8g.48xlarge": {192, gib(384)},
	} {
		if got, _ := LookupInstanceType(name); got != want {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	if _, ok := LookupInstanceType("x1.32xlarge"); ok {
		t.Error("x1.32xlarge is not a GameLift instance type")
	}
}
