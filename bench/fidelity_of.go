package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// measureFidelityOf is the fidelity check of any command (-fidelity-of):
// the distance between perf's self-time shares of the module's functions
// (sampling the untraced command, twice: the floor) and the default
// profile's, and the functions more than 2 points off, printed for each
// CPU setting; nothing is written to the document.
func measureFidelityOf(c config) error {
	argv := strings.Fields(c.fidelityOf)
	if len(argv) == 0 {
		return fmt.Errorf("-fidelity-of: no command")
	}
	exe, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("-fidelity-of: %w", err)
	}
	if argv[0], err = filepath.Abs(exe); err != nil {
		return err
	}
	module := c.fidelityModule
	if module == "" {
		module = argv[0]
	}
	flags := strings.Fields(c.fidelityFlags)
	fmt.Printf("fidelity of %s, module %s, profile flags %q:\n", strings.Join(argv, " "), module, flags)
	for _, s := range settings {
		untraced, err := untracedWall(c, s, argv)
		if err != nil {
			return err
		}
		p1, p1CPU, n1, err := perfShares(c, s, module, argv)
		if err != nil {
			return err
		}
		p2, _, n2, err := perfShares(c, s, module, argv)
		if err != nil {
			return err
		}
		sampled, wall, err := profileShares(c, s, module, flags, argv)
		if err != nil {
			return err
		}
		rows := shareRows(p1, p2, nil, nil, sampled, p1CPU)
		fmt.Printf("  %s: perf vs perf %.1f points (%d and %d samples), default profile %.1f; traced %.2fx untraced (%s)\n",
			s.name, tvd(p1, p2), n1, n2, tvd(sampled, p1CPU), float64(wall)/float64(untraced), untraced)
		fmt.Printf("    functions with at least 1%% of perf's samples: %s (%s)\n", offByTwo(rows), perfSpread(rows))
		for _, r := range rows[:min(len(rows), 12)] {
			fmt.Printf("    %-40s perf %5.1f%% (on CPU %5.1f%%)  profile %5.1f%%\n", r.name, 100*r.perf, 100*r.perfCPU, 100*r.sampled)
		}
	}
	return nil
}
