package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// floorStops is how many int3s one floor run executes.
const floorStops = 20000

// floor measures one bare stop (median of the runs, floorStops stops
// each) in a child under the same CPU setting.
func floor(c config, s setting) (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	var ds []outcome
	for i := 0; i < c.runs; i++ {
		argv := append(append([]string{}, s.prefix...), self, "-floor", c.int3loop, strconv.Itoa(floorStops))
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			return 0, fmt.Errorf("floor: %w", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			return 0, err
		}
		ds = append(ds, outcome{wall: time.Duration(ns)})
	}
	return time.Duration(medianBy(ds, func(o outcome) int64 { return int64(o.wall) })), nil
}
