package gamelift

import (
	"strconv"
	"strings"
)

// The sizes of the EC2 instance types GameLift accepts (api.EC2InstanceType), from Amazon's
// public EC2 instance type specifications ("Default vCPUs" and "Memory (GiB)" of the compute,
// general purpose, memory optimized and accelerated computing tables). A local instance gets
// the vCPUs and memory of its fleet's type (docs/managed-fleets.md, "Resources").
//
// Most families follow one pattern: medium = 1 vCPU, large = 2, xlarge = 4, Nxlarge = 4N, with
// a fixed memory per vCPU (2 GiB for c, 4 GiB for m, 8 GiB for r, with older generations'
// odd figures: c3/c4 1.875, m3 3.75, r3/r4 7.625, c5n 2.625). The sizes that break it are
// listed in instanceTypeExceptions.

// InstanceType is what one instance of an EC2 instance type has.
type InstanceType struct {
	// VCPUs is its number of vCPUs.
	VCPUs int
	// MemoryMiB is its memory in MiB (1 GiB = 1024 MiB).
	MemoryMiB int64
}

// MemoryBytes is t's memory in bytes.
func (t InstanceType) MemoryBytes() int64 { return t.MemoryMiB << 20 }

// instanceFamily is a family whose sizes follow the pattern: its memory per vCPU (MiB) and
// the sizes GameLift offers.
type instanceFamily struct {
	name      string
	mibPerCPU int64
	sizes     string
}

var instanceFamilies = []instanceFamily{
	{"c3", 1920, "large xlarge 2xlarge 4xlarge 8xlarge"},
	{"c4", 1920, "large xlarge 2xlarge 4xlarge 8xlarge"},
	{"c5", 2048, "large xlarge 2xlarge 4xlarge 9xlarge 12xlarge 18xlarge 24xlarge"},
	{"c5a", 2048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"c5ad", 2048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"c5d", 2048, "large xlarge 2xlarge 4xlarge 9xlarge 12xlarge 18xlarge 24xlarge"},
	{"c5n", 2688, "large xlarge 2xlarge 4xlarge 9xlarge 18xlarge"},
	{"c6a", 2048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge"},
	{"c6g", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"c6gd", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"c6gn", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"c6i", 2048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"c6id", 2048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"c6in", 2048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"c7a", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge"},
	{"c7g", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"c7gd", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"c7gn", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"c7i", 2048, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge"},
	{"c8g", 2048, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge"},
	{"g5g", 2048, "xlarge 2xlarge 4xlarge 8xlarge 16xlarge"},
	{"m3", 3840, "medium large xlarge 2xlarge"},
	{"m4", 4096, "large xlarge 2xlarge 4xlarge 10xlarge 16xlarge"},
	{"m5", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"m5a", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"m5ad", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"m5d", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"m5dn", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"m5n", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"m6a", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge"},
	{"m6g", 4096, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"m6gd", 4096, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"m6i", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"m6id", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"m6idn", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"m6in", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"m7a", 4096, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge"},
	{"m7g", 4096, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"m7gd", 4096, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"m7i", 4096, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge"},
	{"m8g", 4096, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge"},
	{"r3", 7808, "large xlarge 2xlarge 4xlarge 8xlarge"},
	{"r4", 7808, "large xlarge 2xlarge 4xlarge 8xlarge 16xlarge"},
	{"r5", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"r5a", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"r5ad", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"r5d", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"r5dn", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"r5n", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge"},
	{"r6a", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge"},
	{"r6g", 8192, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"r6gd", 8192, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"r6i", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"r6id", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"r6idn", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"r6in", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge"},
	{"r7a", 8192, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge"},
	{"r7g", 8192, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"r7gd", 8192, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge"},
	{"r7i", 8192, "large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge"},
	{"r8g", 8192, "medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge"},
}

// instanceTypeExceptions are the types whose figures do not follow their family's pattern.
var instanceTypeExceptions = map[string]InstanceType{
	"t2.micro":     {VCPUs: 1, MemoryMiB: 1024},
	"t2.small":     {VCPUs: 1, MemoryMiB: 2048},
	"t2.medium":    {VCPUs: 2, MemoryMiB: 4096},
	"t2.large":     {VCPUs: 2, MemoryMiB: 8192},
	"c4.8xlarge":   {VCPUs: 36, MemoryMiB: 60 << 10},
	"c5n.9xlarge":  {VCPUs: 36, MemoryMiB: 96 << 10},
	"c5n.18xlarge": {VCPUs: 72, MemoryMiB: 192 << 10},
}

// instanceTypes is every type GameLift accepts, by name.
var instanceTypes = buildInstanceTypes()

func buildInstanceTypes() map[string]InstanceType {
	out := make(map[string]InstanceType, 512)
	for _, f := range instanceFamilies {
		for _, size := range strings.Fields(f.sizes) {
			n := sizeVCPUs(size)
			out[f.name+"."+size] = InstanceType{VCPUs: n, MemoryMiB: int64(n) * f.mibPerCPU}
		}
	}
	for name, t := range instanceTypeExceptions {
		out[name] = t
	}
	return out
}

// sizeVCPUs is the vCPU count of a size that follows the pattern.
func sizeVCPUs(size string) int {
	switch size {
	case "medium":
		return 1
	case "large":
		return 2
	case "xlarge":
		return 4
	}
	n, err := strconv.Atoi(strings.TrimSuffix(size, "xlarge"))
	if err != nil {
		panic("gamelift: instance size " + size + " follows no pattern")
	}
	return 4 * n
}

// LookupInstanceType returns the vCPUs and memory of an EC2 instance type GameLift accepts.
func LookupInstanceType(name string) (InstanceType, bool) {
	t, ok := instanceTypes[name]
	return t, ok
}

// InstanceResources are the limits a local instance's processes run under together: its
// type's vCPUs and memory, and a process count. Zero fields mean no limit.
type InstanceResources struct {
	// CPUs is the CPU time they may use, in CPUs (the type's vCPUs).
	CPUs float64
	// MemoryBytes is the memory they may hold (the type's memory, no swap).
	MemoryBytes int64
	// Pids is how many processes and threads they may have at once (InstancePids).
	Pids int
}

// InstancePids is the process and thread limit of an instance with vcpus vCPUs: 1024 per
// vCPU, at least 4096, enough for 50 server processes of a few dozen threads each while a
// fork bomb stops at the limit.
func InstancePids(vcpus int) int { return max(4096, 1024*vcpus) }

// resourcesOf is the InstanceResources of an instance of type name; none for a type the
// table does not know.
func resourcesOf(name string) InstanceResources {
	t, ok := LookupInstanceType(name)
	if !ok {
		return InstanceResources{}
	}
	return InstanceResources{CPUs: float64(t.VCPUs), MemoryBytes: t.MemoryBytes(), Pids: InstancePids(t.VCPUs)}
}
