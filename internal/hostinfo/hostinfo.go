// Package hostinfo names the machine a measurement was made on: the
// benchmarks print it and the probes' calibration stores it.
package hostinfo

import (
	"fmt"
	"os"
	"strings"
)

// CPUModel is the CPU's model name and how many CPUs the host has, from
// /proc/cpuinfo: "AMD EPYC 7B13 (2 CPUs)".
func CPUModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return cpuModel(string(b))
}

func cpuModel(cpuinfo string) string {
	for _, line := range strings.Split(cpuinfo, "\n") {
		if v, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":")) +
				fmt.Sprintf(" (%d CPUs)", strings.Count(cpuinfo, "processor\t:"))
		}
	}
	return "unknown CPU"
}
